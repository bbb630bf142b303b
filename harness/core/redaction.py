"""Secrets kept out of what is shown: errors, logs, status pages.

Introduced in Chapter 0 with the Anthropic provider; Chapter 5's MCP hub and Chapter 7's proxy use
:func:`hide_values` for an upstream server's last words on stderr, shown in its status (a server that
fails to log in often prints the token it was given, ``${VAR}`` already filled in).

Two kinds of secret reach text that is shown to a reader:

* **Credentials in a URL** (``http://user:password@host``), or in a DSN written without a scheme
  (``admin:password@host``): :func:`redact_url_credentials` shows the user-info part as ``***``.
* **Known secret values** (an API key, a password, a token filled into a server's environment)
  echoed back by something else — often not whole: an endpoint quotes a key's tail, a log line
  cuts it at 20 characters. :func:`redact_secrets` therefore hides every run of text that is a
  piece of a secret at least :data:`MIN_FRAGMENT` characters long, not only the whole value.
  Eight characters of a random key are still far more than an attacker can guess; shorter
  pieces would blank out ordinary words that happen to occur in a secret. A secret may also come
  back encoded: a run of base64 (an ``Authorization: Basic`` header of ``user:secret``) is decoded,
  and hidden whole when what it encodes holds such a piece.
* **Secrets on a command line** (``--token ghp_…``, ``--api-key=…``, ``PASSWORD=…``, a DSN or a bare
  token): :func:`secrets_in_args` picks them out of a server's ``args``, as values to hide.
"""
from __future__ import annotations

import base64
import binascii
import re
from typing import Iterable, Sequence

#: Values shorter than this are not hidden by :func:`hide_values` ("1", "true" would blank out ordinary words).
MIN_VALUE = 4
#: The shortest piece of a secret that is hidden; a secret shorter than this is hidden only whole.
MIN_FRAGMENT = 8
MASK = "***"
# scheme://userinfo@ — the user-info runs to the last '@' before the path, query or fragment.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s@]*(?:@[^/?#\s@]*)*@")
# user:password@host without a scheme (a libpq or SQLAlchemy DSN written short); not git@host:path, which has no password.
_DSN_USERINFO = re.compile(r"(?<![\w.%+:/@-])(?P<user>[\w.%+-]+):(?P<password>[^\s@/:]+)@(?=[\w-])")
# Runs of base64 (standard or URL-safe alphabet) long enough to hold a secret.
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")


def redact_url_credentials(text: str) -> str:
    """``text`` with the user name and password of every URL in it, and of every ``user:password@host``, shown as ``***``."""
    return _DSN_USERINFO.sub(f"{MASK}@", _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text))


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every piece of each secret that is :data:`MIN_FRAGMENT` or more characters long
    (and each whole secret, however short, if it is not empty) replaced by ``***``.

    A short secret is hidden wherever its characters occur, so pass only values that are secret.
    """
    hidden = [False] * len(text)
    whole = {s for s in secrets if s}
    pieces = {s[i:i + MIN_FRAGMENT] for s in whole for i in range(len(s) - MIN_FRAGMENT + 1)}
    for secret in whole:
        _mark_whole(text, secret, hidden)
    for start in range(len(text) - MIN_FRAGMENT + 1):
        if text[start:start + MIN_FRAGMENT] in pieces:
            hidden[start:start + MIN_FRAGMENT] = [True] * MIN_FRAGMENT
    for run in _BASE64.finditer(text):  # a secret sent encoded (Basic auth) is still the secret
        decoded = _decoded(run.group())
        if decoded and (any(s in decoded for s in whole if len(s) < MIN_FRAGMENT)
                        or any(decoded[i:i + MIN_FRAGMENT] in pieces for i in range(len(decoded) - MIN_FRAGMENT + 1))):
            hidden[run.start():run.end()] = [True] * (run.end() - run.start())
    return _masked(text, hidden)


def _decoded(run: str) -> str:
    """The text a run of base64 encodes ('' when it is not base64 of UTF-8 text)."""
    core = run.rstrip("=")
    for alphabet in (b"+/", b"-_"):
        try:
            return base64.b64decode(core + "=" * (-len(core) % 4), altchars=alphabet, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
    return ""


def hide_values(text: str, values: Iterable[str]) -> str:
    """``text`` with every value of :data:`MIN_VALUE` or more characters (and every piece of one, as in
    :func:`redact_secrets`) and every URL's credentials shown as ``***``: for a process's environment,
    whose values are not all secret but any may be."""
    kept = [v for v in values if isinstance(v, str) and len(v) >= MIN_VALUE]
    return redact_url_credentials(redact_secrets(text, kept))


#: A flag or a setting whose value is a secret: ``--token X``, ``--api-key=X``, ``PASSWORD=X``.
_SECRET_NAME = re.compile(r"token|secret|passw|pwd|api[-_]?key|access[-_]?key|private[-_]?key|credential|auth", re.I)
_NAME_VALUE = re.compile(r"^-{0,2}(?P<name>[\w.-]+)=(?P<value>.+)$")
# A bare token: long, of letters, digits, '-' and '_', with a part that mixes letters and digits (ghp_16C7…),
# unlike a name made of words and a year (mcp-server-postgres-2024).
_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_-]{16,}$")


def secrets_in_args(args: Sequence[str]) -> list[str]:
    """The values in a command line that are secrets: after a flag named for one (``--token X``), in a
    ``name=value`` whose name is one (``--api-key=X``, ``PASSWORD=X``), the passwords of URLs and DSNs in it,
    and arguments shaped like a token; so that a server's last words that echo its command line hide them."""
    found: list[str] = []
    for i, arg in enumerate(args):
        pair = _NAME_VALUE.match(arg)
        if arg.startswith("-") and pair is None and _SECRET_NAME.search(arg) and i + 1 < len(args) \
                and not args[i + 1].startswith("-"):
            found.append(args[i + 1])
        if pair and _SECRET_NAME.search(pair["name"]):
            found.append(pair["value"])
        found += url_credentials(arg) + [m["password"] for m in _DSN_USERINFO.finditer(arg)]
        if _TOKEN_SHAPE.match(arg) and any(_mixed(part) for part in re.split(r"[-_]", arg)):
            found.append(arg)
    return list(dict.fromkeys(found))


def _mixed(part: str) -> bool:
    """Whether a part of an argument mixes letters and digits, as generated tokens do (``9f8e7d6c``, not ``2024``)."""
    return any(c.isdigit() for c in part) and any(c.isalpha() for c in part)


def url_credentials(url: str) -> list[str]:
    """The user name and password written into ``url`` (as secrets to hide wherever they are echoed)."""
    match = _URL_USERINFO.match(url.strip())
    if not match:
        return []
    userinfo = match.group()[len(match["scheme"]):-1]
    return [part for part in userinfo.split(":", 1) if part]


def _mark_whole(text: str, secret: str, hidden: list[bool]) -> None:
    start = text.find(secret)
    while start != -1:
        hidden[start:start + len(secret)] = [True] * len(secret)
        start = text.find(secret, start + 1)


def _masked(text: str, hidden: list[bool]) -> str:
    if not any(hidden):
        return text
    out: list[str] = []
    for i, char in enumerate(text):
        if not hidden[i]:
            out.append(char)
        elif i == 0 or not hidden[i - 1]:
            out.append(MASK)
    return "".join(out)
