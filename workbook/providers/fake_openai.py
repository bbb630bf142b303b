"""A small OpenAI-compatible chat endpoint for the tests and Chapter 7: a real HTTP server on 127.0.0.1, in a
background thread.

What it is for: the answers a real server here cannot be made to give — an HTML page, an empty body, ``null``
or ``{}`` with a 200, error statuses, a hang, a redirect — and the README's OpenAI example on a machine without
the real model (``make real-model``), where it stands in for llama-server's ``/v1/chat/completions``. Where
the real model is installed the tests run against the real llama-server instead.

It checks what a request must look like (a model, messages with known roles, every assistant ``tool_calls``
answered by ``tool`` messages with the same ids right after, tools that are functions with a valid name and
object parameters) and answers a valid request with the next queued reply (:meth:`FakeOpenAIServer.reply_next`),
else with the last user message echoed. Faults are queued with :meth:`FakeOpenAIServer.fail_next`, one per
request. Every request is recorded, headers included; with ``delay`` each answer waits that long, and
``most_in_flight`` says how many requests it was answering at once at most (a client's concurrency).
"""
from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from harness.core.json_types import JSON, JSONObject
from workbook.providers.fake_http import QuietHandler, ThreadedHTTPServer

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: Faults that answer 200 with a body that is not a chat completion (what a proxy or a wrong address sends).
BODY_FAULTS = {
    "html": ("text/html", b"<!DOCTYPE html><html><body><h1>Sign in to the proxy</h1></body></html>"),
    "empty": ("application/json", b""),
    "null": ("application/json", b"null"),
    "empty_object": ("application/json", b"{}"),
    "truncated": ("application/json", b'{"id": "chatcmpl-cut", "object": "chat.completion", "choices": [{"ind'),
    "no_choices": ("application/json", b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}'),
}


@dataclass
class Fault:
    kind: str  # a BODY_FAULTS kind, "status" (``status``, ``message`` and ``headers``: a redirect too) or "hang" (``seconds``)
    status: int = 200
    message: str = ""
    seconds: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)



def problem(body: JSON) -> str | None:
    """The first rule the request breaks, as a server would say it; None for a valid request."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not body["model"]:
        return "model: a model name is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
            return f"messages.{i}.role: must be system, user, assistant or tool"
        calls = m.get("tool_calls") or []
        asked = [c.get("id") for c in calls if isinstance(c, dict)]
        answered = [n.get("tool_call_id") for n in messages[i + 1:i + 1 + len(asked)] if n.get("role") == "tool"]
        if asked and sorted(map(str, asked)) != sorted(map(str, answered)):
            return f"messages.{i}: every tool call must be answered by a tool message right after it"
        for c in calls:
            if not (isinstance(c, dict) and c.get("type") == "function" and isinstance(c.get("function"), dict)
                    and isinstance(c["function"].get("arguments"), str)):
                return f"messages.{i}.tool_calls: a call is a function with its arguments as a JSON string"
    for k, t in enumerate(body.get("tools") or []):
        function = t.get("function") if isinstance(t, dict) and t.get("type") == "function" else None
        if not isinstance(function, dict) or not _NAME.match(str(function.get("name", ""))):
            return f"tools.{k}: a tool is a function with a name of 1-64 letters, digits, '_' or '-'"
        if not isinstance(function.get("parameters", {"type": "object"}), dict):
            return f"tools.{k}.function.parameters: must be a JSON Schema object"
    return None


def completion(message: JSONObject, finish_reason: str, model: str, number: int) -> JSONObject:
    """A chat completion holding ``message``, with usage and a cached share as the real API reports them."""
    return {"id": f"chatcmpl-fake-{number}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 100 + number, "completion_tokens": 10, "total_tokens": 110 + number,
                      "prompt_tokens_details": {"cached_tokens": 60}}}


def tool_call(call_id: str, name: str, arguments: JSONObject) -> JSONObject:
    """One entry of a reply's ``tool_calls``."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class FakeOpenAIServer(ThreadedHTTPServer):
    """``with FakeOpenAIServer(api_key=K) as server:`` then point a client at ``server.base_url`` (ends in /v1)."""

    def __init__(self, api_key: str | None = None, delay: float = 0.0) -> None:
        self.api_key = api_key  # when set, any other Authorization gets a 401
        self.delay = delay
        self.in_flight = self.most_in_flight = 0
        self.replies: deque[tuple[JSONObject, str]] = deque()
        self.faults: deque[Fault] = deque()
        super().__init__(self._handler_class(), "fake-openai")

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def reply_next(self, message: JSONObject, finish_reason: str = "stop") -> None:
        """Answer the next valid request with this assistant message (``content``, ``tool_calls``)."""
        self.replies.append((message, finish_reason))

    def fail_next(self, fault: Fault, times: int = 1) -> None:
        self.faults.extend([fault] * times)

    def __enter__(self) -> "FakeOpenAIServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, JSON] | Fault:
        body, number, fault = self.record(path, headers, raw)
        if fault:
            return fault
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error"}}
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"Not found: {path}", "type": "invalid_request_error"}}
        wrong = problem(body)
        if wrong:
            return 400, {"error": {"message": wrong, "type": "invalid_request_error"}}
        with self._lock:
            scripted = self.replies.popleft() if self.replies else None
        if scripted is None:
            said = next((m.get("content") for m in reversed(body["messages"]) if m.get("role") == "user"), "")
            scripted = ({"content": f"You said: {said}"}, "stop")
        return 200, completion(scripted[0], scripted[1], body["model"], number)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                with server._lock:
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                try:
                    server._stopping.wait(server.delay)
                    self._post()
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _post(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                answer = server._answer(self.path.split("?", 1)[0], headers, raw)
                if isinstance(answer, Fault) and answer.kind == "hang":
                    server._stopping.wait(answer.seconds)
                    self.close_connection = True  # nothing written: the client sees a dropped connection
                    return
                if isinstance(answer, Fault) and answer.kind in BODY_FAULTS:
                    kind, data = BODY_FAULTS[answer.kind]
                    self.send(200, kind, data, {})
                elif isinstance(answer, Fault):
                    body = {"error": {"message": answer.message, "type": "server_error"}} if answer.message else {}
                    self.send(answer.status, "application/json", json.dumps(body).encode(), answer.headers)
                else:
                    self.send(answer[0], "application/json", json.dumps(answer[1]).encode(), {})

        return Handler
