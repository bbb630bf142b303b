"""The process between the hub and one upstream MCP server: it dies with its owner, and it caps what the server says.

Introduced in Chapter 5 (MCP integration); Chapter 7's proxy relies on it. The hub runs every stdio server as
``python -I -S guard.py OWNER_PID MAX_BYTES COMMAND [ARGS...]`` (:func:`guarded`): this file uses the
standard library only, so it runs by its path with no import path set up. Why it exists:

* **Nothing outlives its owner.** The SDK starts a server in a process group of its own and ends the
  group when the session closes. A hub that is killed (SIGKILL: a client gave up on ``harness serve``)
  runs no clean-up, and a server that ignores EOF and SIGTERM, and the helpers it started, ran on. The
  guard leads the group and runs the server in it, and Linux sends the guard SIGTERM when its owner
  dies (``PR_SET_PDEATHSIG``, as the local model's server does; elsewhere a thread watches the owner's
  pid). On SIGTERM — from there, or from the SDK's own shutdown — it sends SIGTERM to the group, and
  SIGKILL after :data:`GRACE` seconds: the server and its helpers go however they treat SIGTERM. A
  helper that left the group still carries the server's marker in its environment
  (:func:`ids_carrying`) and is killed too.
* **A message has a size cap.** The SDK's reader joins a long line chunk by chunk, in time quadratic
  in its length (results of 1 / 20 / 60 MB took 1.1 / 8.5 / 57.5 s). The guard passes the server's
  stdout on a line at a time, in linear time, and a line over ``MAX_BYTES`` is cut (:func:`cut_message`):
  a tool's result keeps its id and the start of its text, after a notice saying what was cut; another
  reply becomes an error reply carrying that notice; a request or notification is dropped; a reply
  whose id cannot be found becomes a line that is not an MCP message, which fails the calls waiting on
  the server with the notice quoted.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

#: Seconds the server and its helpers get to exit on SIGTERM before SIGKILL.
GRACE = 1.0
#: Environment variable carrying a server's session id, so its helper processes can be found at the end.
SERVER_ID_VARIABLE = "HARNESS_MCP_SERVER_ID"
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_CHUNK = 1 << 16
_TAIL = 256  # bytes kept of a cut line's end: a Node server writes the id last
_KEPT_TEXT = 100_000  # characters of a cut result's text passed on (the hub shows far fewer)
_HEAD_ID = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
_TAIL_ID = re.compile(rb'(?<!\\)"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$')
_REPLY = re.compile(rb'(?<!\\)"(result|error)"\s*:')
_CONTENT = re.compile(rb'(?<!\\)"content"\s*:\s*\[')
_TEXT = re.compile(rb'(?<!\\)"text"\s*:\s*"')
_STRING_START = re.compile(r'(?:[^"\\]+|\\.)*')


def guarded(command: str, args: Sequence[str], max_bytes: int) -> tuple[str, list[str]]:
    """The command and arguments that run ``command`` under this guard, owned by this process (on POSIX; elsewhere,
    where process groups work otherwise, the command itself: the SDK's own shutdown applies)."""
    if os.name != "posix":
        return command, list(args)
    return sys.executable, ["-I", "-S", str(Path(__file__).resolve()), str(os.getpid()), str(max_bytes), command, *args]


def ids_carrying(*markers: str) -> list[int]:
    """Processes whose environment carries one of ``markers`` (``NAME=value``; Linux /proc, elsewhere none are
    found), this one excepted."""
    found = []
    needles = {m.encode() for m in markers}
    for entry in Path("/proc").glob("[0-9]*") if Path("/proc/self/environ").exists() else ():
        try:
            if needles.intersection((entry / "environ").read_bytes().split(b"\0")):
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return [pid for pid in found if pid != os.getpid()]


def cut_message(head: bytes, tail: bytes, size: int, max_bytes: int) -> bytes | None:
    """What is passed on for a line of ``size`` bytes over ``max_bytes``, from its first ``max_bytes`` bytes and its
    last few: a result cut to its text's start, an error reply, a line that is not an MCP message, or None (dropped)."""
    notice = (f"[The server's reply was {size / 1e6:.1f} MB, more than the {max_bytes / 1e6:g} MB a reply may have: "
              "only its start is kept.]")
    if not _REPLY.search(head[:4096]):
        return None  # a request or a notification: nobody waits for it
    found = _HEAD_ID.match(head) or _TAIL_ID.search(tail)
    if found is None:
        return f"A reply of {size:,} bytes was dropped: it is more than the {max_bytes:,} bytes a reply may have.".encode()
    reply: dict[str, object] = {"jsonrpc": "2.0", "id": json.loads(found.group(1))}
    if _CONTENT.search(head[:4096]):  # a tool's result: its text's start, after the notice
        text = _text_start(head)
        reply["result"] = {"content": [{"type": "text", "text": notice + ("\n" + text if text else "")}],
                           "isError": bool(re.search(rb'"isError"\s*:\s*true', head[:4096] + tail))}
    else:
        reply["error"] = {"code": -32603, "message": notice}
    return json.dumps(reply, ensure_ascii=False).encode()


def _text_start(head: bytes) -> str:
    """The start of the first text block's ``text`` in a cut result ('' when there is none)."""
    found = _TEXT.search(head)
    if found is None:
        return ""
    raw = head[found.end():found.end() + 4 * _KEPT_TEXT].decode("utf-8", "ignore")
    string = _STRING_START.match(raw)  # up to the closing quote, or to the cut
    body = string.group() if string else ""
    for cut in range(6):  # an escape (\u12…) may be cut in half
        try:
            return str(json.loads(f'"{body[:len(body) - cut]}"'))[:_KEPT_TEXT]
        except ValueError:
            continue
    return ""


def relay(read: Callable[[int], bytes], write: Callable[[bytes], None], max_bytes: int) -> None:
    """Pass lines from ``read`` to ``write`` until EOF, each line over ``max_bytes`` cut (:func:`cut_message`);
    each byte is looked at a bounded number of times, however long the line."""
    pieces: list[bytes] = []  # the current line, up to max_bytes
    size, tail = 0, b""
    while chunk := read(_CHUNK):
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end == -1 else chunk[start:end]
            room = max_bytes - min(size, max_bytes)
            if room:
                pieces.append(piece[:room])
            if len(piece) > room:
                tail = (tail + piece[room:])[-_TAIL:]
            size += len(piece)
            if end == -1:
                break
            line = b"".join(pieces) if size <= max_bytes else cut_message(b"".join(pieces), tail, size, max_bytes)
            if line is not None:
                write(line + b"\n")
            pieces, size, tail = [], 0, b""
            start = end + 1
    if size:
        write(b"".join(pieces))


def _write_all(fd: int) -> Callable[[bytes], None]:
    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    return write


def _relay_until_closed(out: int, max_bytes: int) -> None:
    """:func:`relay` from the server's stdout to the guard's, until either end is closed."""
    try:
        relay(lambda n: os.read(out, n), _write_all(1), max_bytes)
    except OSError:  # the hub closed its end (or the server's broke): nothing is left to pass on
        pass


def _watch_owner(owner: int) -> None:
    """Have SIGTERM sent to this process when ``owner`` dies: by Linux, or by a thread that polls."""
    if sys.platform.startswith("linux"):
        try:
            if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0:
                if os.getppid() != owner:  # the owner died before the request took effect
                    os.kill(os.getpid(), signal.SIGTERM)
                return
        except (OSError, AttributeError):
            pass

    def poll() -> None:
        while os.getppid() == owner:
            time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=poll, daemon=True).start()


def main(argv: Sequence[str]) -> int:
    owner, max_bytes, command = int(argv[0]), int(argv[1]), list(argv[2:])
    if os.getpgrp() != os.getpid():  # the SDK starts the guard as a group leader; make sure of it
        os.setpgid(0, 0)
    try:
        server = subprocess.Popen(command, stdout=subprocess.PIPE)  # stdin and stderr are the guard's own
    except OSError as exc:
        print(f"cannot start {command[0]!r}: {exc.strerror or exc}", file=sys.stderr, flush=True)
        return 127
    marker = f"{SERVER_ID_VARIABLE}={os.environ.get(SERVER_ID_VARIABLE, '')}"

    def end_group(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.killpg(0, signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        while server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        for pid in ids_carrying(marker) if marker.partition("=")[2] else ():  # helpers that left the group
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os.killpg(0, signal.SIGKILL)  # the guard too

    signal.signal(signal.SIGTERM, end_group)
    _watch_owner(owner)
    assert server.stdout is not None
    out = server.stdout.fileno()
    passing = threading.Thread(target=_relay_until_closed, args=(out, max_bytes), daemon=True)
    passing.start()
    code = server.wait()
    passing.join(timeout=1.0)  # what the server wrote last; a helper holding its stdout open cannot keep the guard
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
