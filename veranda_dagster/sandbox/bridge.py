"""The bridge inside an agent's sandbox: a loopback port piped to the credential proxy.

``python -I bridge.py --socket /run/veranda/proxy.sock --port N -- <cli argv>`` listens on
``127.0.0.1:N`` in the sandbox's own network namespace (it has nothing else: no route out, no
host service, no abstract socket of the host), relays each connection byte for byte to the
proxy's unix socket (bound in read-only), runs the CLI as its child and exits with the child's
exit code. SIGTERM/SIGINT/SIGHUP are passed to the child; the runner's kill of the process
group (bubblewrap, whose pid namespace ends with it) takes everything down.

Standard library only, and run as a file with ``-I`` from a read-only path: the working
directory is the repository's clone, which must never be on this interpreter's import path.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import subprocess
import sys
import threading
from types import FrameType

MAX_BRIDGED_CONNECTIONS = 64
"""Relayed at once; past it a connection is closed at once (the proxy bounds requests too)."""
PIPE_CHUNK_BYTES = 64 * 1024
CONNECT_TIMEOUT_S = 10.0
"""Reaching the proxy's socket: it is local, so a slow connect means it is gone."""
LISTEN_BACKLOG = 64
EXIT_BRIDGE_FAILED = 70
"""The bridge itself could not start (its port taken, no argv): EX_SOFTWARE."""


def _pump(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(PIPE_CHUNK_BYTES):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _relay(client: socket.socket, socket_path: str, slots: threading.BoundedSemaphore) -> None:
    try:
        with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as upstream:
            upstream.settimeout(CONNECT_TIMEOUT_S)
            try:
                upstream.connect(socket_path)
            except OSError as exc:
                print(f"veranda bridge: proxy unreachable: {exc}", file=sys.stderr)
                return
            upstream.settimeout(None)
            back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            back.start()
            _pump(client, upstream)
            back.join()
    finally:
        slots.release()


def _serve(listener: socket.socket, socket_path: str) -> None:
    slots = threading.BoundedSemaphore(MAX_BRIDGED_CONNECTIONS)
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        if not slots.acquire(blocking=False):
            client.close()
            continue
        threading.Thread(target=_relay, args=(client, socket_path, slots), daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="veranda-bridge")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("veranda bridge: no command to run", file=sys.stderr)
        return EXIT_BRIDGE_FAILED
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", args.port))
        listener.listen(LISTEN_BACKLOG)
    except OSError as exc:
        print(f"veranda bridge: cannot listen on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return EXIT_BRIDGE_FAILED
    threading.Thread(target=_serve, args=(listener, args.socket), daemon=True).start()
    try:
        child = subprocess.Popen(command)
    except OSError as exc:
        print(f"veranda bridge: cannot start {command[0]}: {exc}", file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126

    def forward(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    code = child.wait()
    listener.close()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
