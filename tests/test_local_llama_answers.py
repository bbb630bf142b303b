"""The local model's server: its requests to 127.0.0.1 never go through a proxy set in the environment, and an
answer it cannot read is one ProviderError sentence (issue 40: with HTTP_PROXY set every prompt reached the
proxy and start-up failed after 180 s; a 200 answer with HTML, ``{}`` or null content escaped as a raw
JSONDecodeError, KeyError or AttributeError)."""
from __future__ import annotations

import http.server
import textwrap
import threading
import urllib.request

import pytest

from harness.core.messages import Transcript
from harness.core.tools import Tool
from harness.providers.base import ProviderError
from test_local_llama import stand_in_install
from workbook.providers.local_llama import LocalLlamaProvider, LocalLlamaServer, RealModelInstall

# A stand-in llama-server: /health and /props as the real one, and every POST answered with ``--answer``'s body.
ANSWERING = textwrap.dedent("""\
    import http.server, json, sys
    arg = lambda name: sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None
    port, props = int(arg("--port")), {"model_path": arg("-m"), "model_alias": arg("--alias")}
    body = {"html": b"<html><body>502 Bad Gateway</body></html>", "empty": b"{}", "null": b'{"content": null, "prompt": null}',
            "list": b"[1, 2]", "ok": b'{"content": "read_file\\\\"", "prompt": "PROMPT"}'}[arg("--answer")]
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            out = json.dumps(props if self.path == "/props" else {"status": "ok"}).encode()
            self.send_response(200); self.end_headers(); self.wfile.write(out)
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200); self.end_headers(); self.wfile.write(body)
        def log_message(self, *a): pass
    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
""")
TOOLS = [Tool("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),
         Tool("write_file", "Write a file.", {"type": "object", "properties": {"path": {"type": "string"}}})]


@pytest.fixture
def answering_install(tmp_path) -> RealModelInstall:
    return stand_in_install(tmp_path, ANSWERING)


@pytest.mark.parametrize("answer", ["html", "empty", "null", "list"])
def test_an_answer_that_is_not_what_the_server_sends_is_one_sentence(answering_install, answer):
    with LocalLlamaProvider(answering_install, startup_timeout=30, extra_args=["--answer", answer]) as model:
        for ask in (lambda: model.choose("read the file", TOOLS),
                    lambda: model.next_step("", Transcript(), TOOLS),
                    lambda: model.complete_from("", "say hi", "Hi")):
            with pytest.raises(ProviderError) as caught:
                ask()
            message = str(caught.value)
            assert "\n" not in message and message.startswith("llama-server answered") and "/" in message, message


def test_a_proxy_in_the_environment_is_not_used_for_127_0_0_1(answering_install, monkeypatch):
    seen: list[str] = []

    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.path)
            self.send_response(502)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *a):
            pass

    proxy = http.server.HTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.server_port}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(urllib.request, "_opener", None)  # urlopen's own opener reads the proxies when first made
    try:
        server = LocalLlamaServer(answering_install, startup_timeout=15, extra_args=["--answer", "ok"])
        try:
            assert server.post("/apply-template", {"messages": []})["prompt"] == "PROMPT"
        finally:
            server.close()
        assert seen == [], f"the proxy saw {seen}"
    finally:
        proxy.shutdown()
        proxy.server_close()
