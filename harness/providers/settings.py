"""Settings the reader supplies: the environment first, then a git-ignored ``.env`` (the checkout's, for the workbook).

Introduced in Chapter 0, where ``default_provider`` decides between Claude and the offline model.

A key must never be pasted into a notebook, so it comes from the environment or from ``.env``
(``.env.example`` is the committed template). The file is parsed here rather than with
python-dotenv because the format needed is tiny (``KEY=VALUE``, comments, optional quotes,
optional ``export``) and because reading must not change ``os.environ``: MCP servers started
later inherit the environment, and they have no business seeing the key. Values are never
echoed in errors, since a malformed line may be a pasted key.
"""
from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

from harness.core.places import located

ENV_FILE = ".env"
_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


# A quoted value: up to its closing quote (a double-quoted one may hold \"), then at most a comment.
_QUOTED = re.compile(r"""^(?:"(?P<double>(?:[^"\\]|\\.)*)"|'(?P<single>[^']*)')\s*(?P<rest>.*)$""")


def _unquote(raw: str, where: str) -> str:
    """The value of ``KEY=raw``; ``where`` names the line for an error (which never shows the value: it may be a key)."""
    value = raw.strip()
    if value[:1] not in ("'", '"'):
        return re.split(r"\s+#", value, maxsplit=1)[0].strip()  # an unquoted value may end in a comment
    quoted = _QUOTED.match(value)
    if quoted is None:
        raise ValueError(f"{where} opens a quote it does not close (its text is not shown, it may be a secret): "
                         "close the quote.")
    if quoted["rest"] and not quoted["rest"].startswith("#"):
        raise ValueError(f"{where} has text after its closing quote (not shown, it may be a secret): "
                         "keep the whole value inside the quotes.")
    return quoted["double"] if quoted["double"] is not None else quoted["single"]


def _decode(path: Path) -> str:
    """The text of a .env file: UTF-8 (with or without a BOM), or UTF-16 with its BOM (Windows Notepad)."""
    data = path.read_bytes()
    codec = "utf-16" if data.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 or UTF-16 text: save it as UTF-8.") from None


def read_env_file(path: Path) -> dict[str, str]:
    """The KEY=VALUE pairs of a .env file; a line that is neither that, blank nor a comment is an error."""
    values: dict[str, str] = {}
    for number, line in enumerate(_decode(path).splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.match(stripped)
        if not match:
            raise ValueError(f"{path} line {number} is not KEY=VALUE (its text is not shown, it may be a secret): fix it or start it with '#'.")
        values[match.group(1)] = _unquote(match.group(2), f"{path} line {number}")
    return values


def env_file() -> Path | None:
    """``$HARNESS_ENV_FILE``, else the ``.env`` in the working folder or the nearest one above it (a notebook
    in ``notebooks/`` finds the checkout's); None if there is none. ``HARNESS_ENV_FILE`` naming nothing is an
    error: whoever set it expects settings from it.

    A folder is not read: named by ``HARNESS_ENV_FILE`` it is an error; found as ``.env`` (often a
    virtualenv of that name) it is ignored with a warning, so the reader knows no setting came from it.
    """
    named = os.environ.get("HARNESS_ENV_FILE", "").strip()
    if named and not Path(named).expanduser().exists():
        raise ValueError(f"HARNESS_ENV_FILE names {Path(named).expanduser()}, which does not exist: point it at a file "
                         "of KEY=VALUE lines, or unset it.")
    path = located("HARNESS_ENV_FILE", ENV_FILE)
    if path and path.is_dir():
        if os.environ.get("HARNESS_ENV_FILE", "").strip():
            raise ValueError(f"HARNESS_ENV_FILE names {path}, which is a folder, not a file: point it at a file "
                             "of KEY=VALUE lines.")
        warnings.warn(f"{path} is a folder, not a settings file: it is ignored, so settings come from the "
                      "environment only.", stacklevel=3)
        return None
    return path if path and path.is_file() else None


def setting(name: str) -> tuple[str | None, str | None]:
    """(value, where it came from: 'environment' or '.env') for a setting; (None, None) when unset or empty."""
    value = os.environ.get(name, "").strip()
    if value:
        return value, "environment"
    path = env_file()
    if path:
        value = read_env_file(path).get(name, "").strip()
        if value:
            return value, ENV_FILE
    return None, None
