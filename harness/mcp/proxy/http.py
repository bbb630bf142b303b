"""``harness serve --http HOST:PORT``: the proxy over streamable HTTP, so several clients share one index.

Introduced in Chapter 7 with ``harness serve``. Over stdio each client starts a proxy of its own, which
starts every upstream server again and builds its own index; over HTTP one proxy serves them all, each
client in a session of its own (the SDK's session manager: one MCP session per ``Mcp-Session-Id``,
so a client never sees another's replies). The address is checked before anything starts:

* it listens on 127.0.0.1 unless told otherwise, and a host beyond this machine is refused unless
  the names clients will use for it are given (``--allow-host``): a proxy reachable from the
  network runs its servers' tools for anyone who reaches it;
* every request's ``Host`` and ``Origin`` must be this machine or an allowed name (the MCP spec's
  defence against DNS rebinding: a web page cannot make a browser talk to the proxy); a request
  without ``Origin`` (not from a browser) passes.
"""
from __future__ import annotations

import contextlib
import ipaddress
import socket
import sys
from dataclasses import dataclass
from typing import Any, Sequence

#: The address ``--http`` listens on when only a port is given.
DEFAULT_HOST = "127.0.0.1"
#: What a client on this machine may put in ``Host`` and ``Origin`` (any port).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
PATH = "/mcp"


@dataclass(frozen=True)
class Listen:
    """Where the proxy listens, and the host names (beyond this machine's) clients may call it by."""

    host: str
    port: int
    allowed: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{PATH}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_listen(text: str, allowed: Sequence[str] = ()) -> Listen:
    """``PORT``, ``HOST:PORT`` or ``[IPv6]:PORT`` as a :class:`Listen`, or a one-sentence ValueError
    (a host beyond this machine needs ``allowed`` names)."""
    host, _, port_text = text.rpartition(":")
    host = host.strip("[]") or DEFAULT_HOST
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65_535:
        raise ValueError(f"--http takes PORT or HOST:PORT (as 127.0.0.1:8765), got {text!r}.")
    if not is_loopback(host) and not allowed:
        raise ValueError(f"--http {text} listens beyond this machine, where anyone who reaches it runs your servers' "
                         "tools: name the host names clients will use with --allow-host NAME, or listen on 127.0.0.1.")
    return Listen(host, int(port_text), tuple(allowed))


def security(listen: Listen) -> Any:  # Any: the SDK's TransportSecuritySettings, imported only when served
    """The SDK's DNS-rebinding check: ``Host`` and ``Origin`` must name this machine or an allowed host (any port)."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = [*LOOPBACK_NAMES, *listen.allowed]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for n in names for h in (n, f"{n}:*")],
        allowed_origins=[o for n in names for scheme in ("http", "https") for o in (f"{scheme}://{n}", f"{scheme}://{n}:*")])


def bound_socket(listen: Listen) -> tuple[socket.socket, Listen]:
    """A listening socket at ``listen`` (port 0: a free one), and the address it got."""
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((listen.host, listen.port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"--http cannot listen on {listen.host}:{listen.port}: {exc.strerror}.") from None
    sock.listen(128)
    return sock, Listen(listen.host, sock.getsockname()[1], listen.allowed)


async def serve_http(server: Any, listen: Listen) -> None:  # Any: the SDK's low-level Server
    """Serve ``server`` over streamable HTTP at ``listen`` until cancelled; says where on stderr.

    uvicorn's own signal handling is switched off: the proxy's (:func:`~harness.mcp.proxy.server.ended_by_signals`)
    ends the upstream servers first, over stdio and HTTP alike.
    """
    import uvicorn

    sock, bound = bound_socket(listen)
    app = server.streamable_http_app(streamable_http_path=PATH, host=bound.host, transport_security=security(bound))
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    web.capture_signals = contextlib.nullcontext  # type: ignore[method-assign, assignment]  # see the docstring
    print(f"harness serve: listening on {bound.url}", file=sys.stderr, flush=True)
    with sock:
        await web.serve(sockets=[sock])
