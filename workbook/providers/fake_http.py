"""A real HTTP server on 127.0.0.1 in a background thread: what the workbook's fake API servers run on
(:mod:`~workbook.providers.fake_anthropic`, :mod:`~workbook.providers.fake_openai`).

They live in the workbook, not in tests/, because Chapter 7 runs the README's own-loop examples against them as
the tests do: one fake for both, so what the chapter shows is what the tests check. A fake answers through the
real SDK's real HTTP path (headers, JSON, status codes, dropped connections), so a test covers what a user's
request meets; the fakes differ only in the API they speak.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.core.json_types import JSON


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # names in lower case
    body: JSON

    def api_key(self) -> str | None:
        """The key the client sent, in either header the APIs accept."""
        auth = self.headers.get("authorization", "")
        return self.headers.get("x-api-key") or (auth[len("Bearer "):] if auth.startswith("Bearer ") else None)


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that writes whole answers and logs nothing (test output stays clean)."""

    def send(self, status: int, kind: str, data: bytes, extra: dict[str, str]) -> None:
        """Answer with ``status``, a body of content type ``kind`` and the ``extra`` headers."""
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # Any: the stdlib's signature
        pass


class ThreadedHTTPServer:
    """``handler`` served on a free port of 127.0.0.1 from :meth:`start` to :meth:`stop`; ``_stopping`` is set when
    it stops, so a handler that is made to hang wakes up. Every request is recorded (:meth:`record`), and each takes
    the next of the queued ``faults`` (the fake's own kind of fault)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], name: str) -> None:
        self.requests: list[RecordedRequest] = []
        self.faults: deque[Any] = deque()  # Any: each fake queues its own kind of Fault
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=name,
                                        daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_port}"  # bound to 127.0.0.1 in __init__

    def record(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[JSON, int, Any]:  # Any: the fake's Fault
        """A request recorded: its JSON body (None when it is not JSON), its number, and the fault queued for it."""
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = None
        with self._lock:
            self.requests.append(RecordedRequest(path, headers, body))
            return body, len(self.requests), self.faults.popleft() if self.faults else None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()  # wakes any handler that is 'hanging'
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
