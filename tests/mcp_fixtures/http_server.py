"""Remote MCP servers on 127.0.0.1, real ones the MCP SDK runs, some of them broken on purpose.

Run with ``python tests/mcp_fixtures/http_server.py MODE [--transport http|sse] [--token T]``: it
binds a free port on 127.0.0.1, prints the port on its first stdout line, then serves until killed.

* ``ok`` — an ``MCPServer`` with tools (``add``, ``echo_header``, ``picture``, ``crash``, ``sleep``),
  a resource and a prompt; ``crash`` ends the process mid-call, ``sleep`` never answers; with
  ``--token``, requests without ``Authorization: Bearer T`` get 401;
* ``hang`` — accepts connections and never answers a byte;
* ``garbage`` — answers every request with 200 and an HTML page instead of MCP.

Used by tests/test_mcp_remote.py and tests/test_proxy_http.py (through tests/proxy_http_support.py).
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import os
import socket
import sys

import uvicorn
from mcp.server.mcpserver import Context, Image, MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


def mcp_app(transport: str, token: str | None):
    app = MCPServer("remote-fixture", version="0.1.0", log_level="WARNING")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two whole numbers and return the sum."""
        return a + b

    @app.tool()
    def echo_header(ctx: Context, name: str) -> str:
        """Return the value of one HTTP header of this request (to check what the client sent)."""
        return (ctx.headers or {}).get(name, "")

    @app.tool()
    def picture() -> Image:
        """Return a one-pixel PNG image."""
        return Image(data=PNG, format="png")

    @app.tool()
    def crash() -> str:
        """End the server process in the middle of the call."""
        os._exit(3)

    @app.tool()
    async def sleep() -> str:
        """Never answer."""
        await asyncio.sleep(3600)
        return "late"

    @app.resource("fixture://greeting", mime_type="text/plain")
    def greeting() -> str:
        """A short greeting."""
        return "hello from the remote fixture"

    @app.prompt()
    def review(topic: str) -> str:
        """Ask for a review of a topic."""
        return f"Please review {topic}."

    asgi = app.streamable_http_app() if transport == "http" else app.sse_app()
    if token is None:
        return asgi

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != f"Bearer {token}".encode():
            await PlainTextResponse("unauthorized", status_code=401)(scope, receive, send)
            return
        await asgi(scope, receive, send)

    return guarded


def garbage_app():
    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse("<html><body>Welcome to nginx!</body></html>")

    return Starlette(routes=[Route("/{path:path}", page, methods=["GET", "POST", "DELETE"])])


async def hang(sock: socket.socket) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(3600)

    server = await asyncio.start_server(silent, sock=sock)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("ok", "hang", "garbage"))
    parser.add_argument("--transport", choices=("http", "sse"), default="http")
    parser.add_argument("--token")
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(sock.getsockname()[1], flush=True)
    if args.mode == "hang":
        asyncio.run(hang(sock))
        return
    app = mcp_app(args.transport, args.token) if args.mode == "ok" else garbage_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    sys.exit(main())
