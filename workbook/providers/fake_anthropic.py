"""A local Anthropic Messages API for the tests and Chapter 7: a real HTTP server on 127.0.0.1, in a background thread.

The real ``anthropic`` SDK talks to it through ``base_url``, so tests cover the real request and
response path with no network: headers, JSON, status codes, retries, dropped connections.

It checks what a request must look like (model, max_tokens, messages that start with the user
and alternate — consecutive messages of one role count as one turn, as the API combines them —, every ``tool_use`` answered by a ``tool_result`` in the next message, tools with
a name, a description and an object ``input_schema``) and answers with one deterministic rule:

* the last user message carries tool results -> a text naming each tool and what it returned;
* its text names a tool on offer -> a short text and a ``tool_use`` of the first such tool
  (in the order the tools were sent), whose input is the first JSON object in the text, or {};
* otherwise -> a text echoing the request.

``usage`` counts words and punctuation of the request (``count_tokens`` gives the same number)
and carries the prompt-caching fields and ``service_tier`` as the real API's does; every answer
has the ``anthropic-ratelimit-*`` headers. Faults are queued with
:meth:`FakeAnthropicServer.fail_next` and served one per request: an error in the API's own
shape (any status, 408/409 included), a dropped connection, a hang, or a 200 whose body is an
HTML page, cut-off JSON or ``{}`` (what a proxy in the way sends). :meth:`reply_next` queues a
reply the rule above would not give — empty content, any stop reason, parallel tool calls,
server-tool blocks. :meth:`redirect_next` answers the next request with a 307/308 to another address. With ``thinking=True`` the server acts like a model that thinks by default:
each reply starts with a signed ``thinking`` block, and, as the API does, a request whose last
assistant tool call is not preceded by its thinking block, or carries a changed signature, is
rejected. Every request is recorded, headers included, for tests to inspect.
"""
from __future__ import annotations

import hashlib
import json
import re
import socket
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from harness.core.json_types import JSON, JSONObject
from workbook.providers.fake_http import QuietHandler, RecordedRequest, ThreadedHTTPServer

#: Error kinds as the API names them, with their status codes and a typical message.
ERRORS: dict[str, tuple[int, str]] = {
    "invalid_request_error": (400, "Invalid request"),
    "authentication_error": (401, "invalid x-api-key"),
    "billing_error": (402, "Your credit balance is too low to access the Anthropic API"),
    "permission_error": (403, "Your API key does not have permission to use the specified resource"),
    "not_found_error": (404, "Not found"),
    "request_too_large": (413, "Request exceeds the maximum allowed number of bytes"),
    "rate_limit_error": (429, "Number of request tokens has exceeded your per-minute rate limit"),
    "api_error": (500, "Internal server error"),
    "timeout_error": (504, "Request timed out"),
    "overloaded_error": (529, "Overloaded"),
}
#: Faults that are not an error response: drop the connection, or say nothing for a while.
SILENT_FAULTS = ("disconnect", "hang")
#: Faults that answer 200 with a body that is not a Messages API response.
BODY_FAULTS = {
    "html": ("text/html", b"<!DOCTYPE html><html><body><h1>Sign in to the proxy</h1></body></html>"),
    "truncated": ("application/json", b'{"id": "msg_cut", "type": "message", "role": "assistant", "content": [{"ty'),
    "empty_object": ("application/json", b"{}"),
}
RATE_LIMIT_HEADERS = {
    "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
    "anthropic-ratelimit-requests-reset": "2026-11-23T12:00:00Z",
    "anthropic-ratelimit-input-tokens-limit": "50000", "anthropic-ratelimit-input-tokens-remaining": "49000",
    "anthropic-ratelimit-input-tokens-reset": "2026-11-23T12:00:00Z",
    "anthropic-ratelimit-output-tokens-limit": "10000", "anthropic-ratelimit-output-tokens-remaining": "9900",
    "anthropic-ratelimit-output-tokens-reset": "2026-11-23T12:00:00Z",
}
_SIGNING_KEY = b"fake-anthropic-thinking"
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass
class Fault:
    kind: str
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    status: int | None = None  # overrides the kind's usual status (408 and 409 have no kind of their own)


def signature(thinking: str) -> str:
    """The signature this server puts on a thinking block (and checks when it comes back)."""
    return hashlib.sha256(_SIGNING_KEY + thinking.encode()).hexdigest()



class RequestError(ValueError):
    """The request breaks an API rule; the message is what the API would say."""


def count_tokens(body: JSONObject) -> int:
    """A deterministic stand-in for a tokenizer: words and punctuation of the request's input."""
    parts = {k: body.get(k) for k in ("system", "messages", "tools")}
    return len(_TOKEN.findall(json.dumps(parts, sort_keys=True)))


def _blocks(message: JSONObject) -> list[JSONObject]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _merge_turns(messages: list[JSON]) -> list[JSON]:
    """Consecutive messages of one role as one turn, as the API combines them."""
    merged: list[JSON] = []
    for message in messages:
        if (merged and isinstance(message, dict) and isinstance(merged[-1], dict)
                and message.get("role") == merged[-1].get("role") and message.get("content")):
            merged[-1] = {"role": message["role"], "content": _blocks(merged[-1]) + _blocks(message)}
        else:
            merged.append(message)
    return merged


def validate(body: JSON, *, counting: bool, thinking: bool = False) -> None:
    """Raise RequestError naming the first rule the request breaks."""
    if not isinstance(body, dict):
        raise RequestError("The request body must be a JSON object.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise RequestError("model: Field required")
    if not counting and not (isinstance(body.get("max_tokens"), int) and body["max_tokens"] >= 1):
        raise RequestError("max_tokens: Field required and must be an integer of at least 1")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages: at least one message is required")
    messages = _merge_turns(messages)
    for i, message in enumerate(messages):
        expected = "user" if i % 2 == 0 else "assistant"
        if not isinstance(message, dict) or message.get("role") != expected:
            raise RequestError(f"messages.{i}: roles must alternate between \"user\" and \"assistant\", starting with \"user\"")
        content = message.get("content")
        if not content or not isinstance(content, (str, list)):
            raise RequestError(f"messages.{i}: content must be a non-empty string or list of blocks")
        for j, block in enumerate(_blocks(message)):
            kind = block.get("type") if isinstance(block, dict) else None
            allowed = {"text"} | ({"tool_use", "thinking", "redacted_thinking", "server_tool_use",
                                   "tool_search_tool_result"} if expected == "assistant" else {"tool_result"})
            if kind not in allowed:
                raise RequestError(f"messages.{i}.content.{j}: block type {kind!r} is not allowed in a {expected} message")
            if kind == "tool_use" and not (block.get("id") and block.get("name") and isinstance(block.get("input"), dict)):
                raise RequestError(f"messages.{i}.content.{j}: tool_use needs id, name and an object input")
            if kind == "thinking" and block.get("signature") != signature(str(block.get("thinking", ""))):
                raise RequestError(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
        if i == 0 and any(b.get("type") == "tool_result" for b in _blocks(message)):
            raise RequestError("messages.0: unexpected `tool_use_id` found in `tool_result` blocks")
        if expected == "assistant" and i + 1 < len(messages):
            asked = {b["id"] for b in _blocks(message) if b.get("type") == "tool_use"}
            answered = {b.get("tool_use_id") for b in _blocks(messages[i + 1]) if b.get("type") == "tool_result"}
            if asked - answered:
                raise RequestError(
                    f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    + ", ".join(sorted(asked - answered))
                )
            if answered - asked:
                raise RequestError(f"messages.{i + 1}: unexpected `tool_use_id` found in `tool_result` blocks")
    if thinking and not counting:
        calls = [i for i, m in enumerate(messages) if m["role"] == "assistant"
                 and any(b.get("type") == "tool_use" for b in _blocks(m))]
        if calls and _blocks(messages[calls[-1]])[0].get("type") not in ("thinking", "redacted_thinking"):
            raise RequestError(
                f"messages.{calls[-1]}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                f"`{_blocks(messages[calls[-1]])[0].get('type')}`. When `thinking` is enabled, a final `assistant` message "
                "must start with a thinking block")
    tools = body.get("tools", [])
    if not isinstance(tools, list):
        raise RequestError("tools: Input should be a valid list")
    if not tools and any(b.get("type") in ("tool_use", "tool_result") for m in messages for b in _blocks(m)):
        raise RequestError("Requests which include `tool_use` or `tool_result` blocks must define tools.")
    choice = body.get("tool_choice")
    if choice is not None and not (isinstance(choice, dict) and choice.get("type") in ("auto", "any", "tool", "none")):
        raise RequestError("tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'")
    names: set[str] = set()
    server_tools = [t for t in tools if isinstance(t, dict) and t.get("type", "custom") != "custom"]
    custom = [t for t in tools if not (isinstance(t, dict) and t.get("type", "custom") != "custom")]
    deferred = [t for t in custom if isinstance(t, dict) and t.get("defer_loading")]
    references = {c.get("tool_name") for m in messages for b in _blocks(m) if b.get("type") == "tool_result"
                  and isinstance(b.get("content"), list) for c in b["content"] if c.get("type") == "tool_reference"}
    searched = any(str(t.get("type", "")).startswith("tool_search_tool") for t in server_tools)
    unreferenced = [t["name"] for t in deferred if t.get("name") not in references]
    if unreferenced and not searched:
        raise RequestError("tools: deferred tools (defer_loading: true) need a tool search tool in the request, or a "
                           f"tool_reference in a tool result (custom tool search): {', '.join(unreferenced)}")
    if references - {t.get("name") for t in deferred}:
        raise RequestError("tool_reference names a tool not defined with defer_loading: true: "
                           + ", ".join(sorted(str(r) for r in references - {t.get("name") for t in deferred})))
    if deferred and len(deferred) == len(tools):
        raise RequestError("tools: at least one tool must not be deferred")
    for t in server_tools:
        if not _TOOL_NAME.match(str(t.get("name", ""))):
            raise RequestError(f"tools: server tool {t.get('type')!r} needs a name")
    for k, t in enumerate(custom):
        if not isinstance(t, dict) or not _TOOL_NAME.match(str(t.get("name", ""))):
            raise RequestError(f"tools.{k}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if not isinstance(t.get("description"), str):
            raise RequestError(f"tools.{k}.description: a string description is required")
        if not isinstance(t.get("input_schema"), dict) or t["input_schema"].get("type") != "object":
            raise RequestError(f"tools.{k}.input_schema.type: Input should be 'object'")
        if t["name"] in names:
            raise RequestError("tools: Tool names must be unique.")
        names.add(t["name"])


def _first_json_object(text: str) -> JSONObject:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def reply(body: JSONObject, tool_use_id: str) -> tuple[list[JSONObject], str]:
    """The deterministic answer (content blocks, stop_reason) described in the module docstring."""
    messages = body["messages"]
    last = _blocks(messages[-1])
    results = [b for b in last if b.get("type") == "tool_result"]
    if results:
        names = {b["id"]: b["name"] for b in _blocks(messages[-2]) if b.get("type") == "tool_use"}
        said = "; ".join(f"{names[r['tool_use_id']]} returned {r.get('content', '')}" for r in results)
        return [{"type": "text", "text": f"Done: {said}."}], "end_turn"
    text = " ".join(b["text"] for b in last if b.get("type") == "text")
    for t in body.get("tools", []):
        if re.search(rf"(?<![\w-]){re.escape(t['name'])}(?![\w-])", text):
            call = {"type": "tool_use", "id": tool_use_id, "name": t["name"], "input": _first_json_object(text)}
            return [{"type": "text", "text": f"I'll use {t['name']}."}, call], "tool_use"
    return [{"type": "text", "text": f"No tool was named. You said: {text}"}], "end_turn"


class FakeAnthropicServer(ThreadedHTTPServer):
    """``with FakeAnthropicServer(api_key=K) as server:`` then point the SDK at ``server.base_url``."""

    def __init__(self, api_key: str | None = None, *, thinking: bool = False) -> None:
        self.api_key = api_key  # when set, any other key gets the API's 401
        self.thinking = thinking  # every reply starts with a signed thinking block
        self.scripted: deque[tuple[list[JSONObject], str]] = deque()
        self.responses: list[JSONObject] = []
        self.faults: deque[Fault] = deque()
        self.redirects: deque[tuple[int, str]] = deque()
        super().__init__(self._handler_class(), "fake-anthropic")

    @property
    def base_url(self) -> str:
        return self.origin

    def fail_next(self, kind: str, times: int = 1, headers: dict[str, str] | None = None, seconds: float = 0.0,
                  status: int | None = None, message: str | None = None) -> None:
        """Queue ``times`` faults: an ERRORS kind (e.g. 'overloaded_error', with ``status`` and ``message``
        to override), 'disconnect', 'hang' for ``seconds``, or a BODY_FAULTS kind ('html', 'truncated', 'empty_object')."""
        if kind not in ERRORS and kind not in SILENT_FAULTS and kind not in BODY_FAULTS:
            raise ValueError(f"Unknown fault {kind!r}; known: {sorted(ERRORS) + list(SILENT_FAULTS) + list(BODY_FAULTS)}.")
        extra = dict(headers or {}) | ({"x-fault-message": message} if message else {})
        self.faults.extend(Fault(kind, extra, seconds, status) for _ in range(times))

    def reply_next(self, content: list[JSONObject], stop_reason: str) -> None:
        """Answer the next valid /v1/messages request with exactly this content and stop reason."""
        self.scripted.append((content, stop_reason))

    def redirect_next(self, location: str, status: int = 307) -> None:
        """Answer the next request with ``status`` (307 or 308 keep the method and body) pointing at ``location``."""
        self.redirects.append((status, location))

    def __enter__(self) -> "FakeAnthropicServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- one request ---------------------------------------------------------------------

    def _answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], JSON] | Fault:
        """(status, extra headers, JSON body) for a request, or the Fault to act out instead."""
        body, number, fault = self.record(path, headers, raw)
        if fault and (fault.kind in SILENT_FAULTS or fault.kind in BODY_FAULTS):
            return fault
        if fault:
            headers_out = {k: v for k, v in fault.headers.items() if k != "x-fault-message"}
            message = fault.headers.get("x-fault-message", ERRORS[fault.kind][1])
            return self._error(fault.kind, message, headers_out, fault.status)
        sent_key = self.requests[-1].api_key()
        if sent_key is None or (self.api_key is not None and sent_key != self.api_key):
            return self._error("authentication_error", "invalid x-api-key")
        if not headers.get("anthropic-version"):
            return self._error("invalid_request_error", "anthropic-version: header is required")
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            return self._error("not_found_error", f"Not found: {path}")
        counting = path.endswith("/count_tokens")
        try:
            validate(body, counting=counting, thinking=self.thinking)
        except RequestError as err:
            return self._error("invalid_request_error", str(err))
        if counting:
            return 200, dict(RATE_LIMIT_HEADERS), {"input_tokens": count_tokens(body)}
        with self._lock:
            scripted = self.scripted.popleft() if self.scripted else None
        content, stop_reason = scripted or reply(body, tool_use_id=f"toolu_fake_{number:04d}")
        if self.thinking and scripted is None:
            thought = f"The user asked for something; request {number} decides how to answer."
            content = [{"type": "thinking", "thinking": thought, "signature": signature(thought)}, *content]
        response = {
            "id": f"msg_fake_{number:04d}", "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": count_tokens(body), "output_tokens": len(_TOKEN.findall(json.dumps(content))),
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "service_tier": "standard"},
        }
        self.responses.append(response)
        return 200, dict(RATE_LIMIT_HEADERS), response

    @staticmethod
    def _error(kind: str, message: str, headers: dict[str, str] | None = None,
               status: int | None = None) -> tuple[int, dict[str, str], JSON]:
        body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}
        return status or ERRORS[kind][0], dict(headers or {}), body

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                if server.redirects:
                    status, location = server.redirects.popleft()
                    server.requests.append(RecordedRequest(self.path, headers, None))
                    self.send_response(status)
                    self.send_header("location", location + self.path)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                answer = server._answer(self.path.split("?", 1)[0], headers, raw)
                if isinstance(answer, Fault) and answer.kind in BODY_FAULTS:
                    self.send(200, *BODY_FAULTS[answer.kind], {})
                    return
                if isinstance(answer, Fault):
                    if answer.kind == "hang":
                        server._stopping.wait(answer.seconds)
                    self.close_connection = True  # nothing written: the client sees a dropped connection
                    return
                status, extra, body = answer
                self.send(status, "application/json", json.dumps(body).encode(), {"request-id": "req_fake", **extra})

        return Handler


def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
