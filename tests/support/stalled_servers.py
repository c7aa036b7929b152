"""Loopback servers that stall for real, for the tests of connect and read bounds.

``unconnectable``: a listening socket whose accept queue is full and never drained, so a new
connection's SYN is dropped and ``connect`` waits (as it does for a host that is down behind
a firewall). ``silent``: accepts, reads the request, never answers (a server hung after the
handshake). Both are plain ``127.0.0.1`` ports: no network, nothing left behind on exit.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

QUEUE_FILLERS = 4
"""Half-open connections that fill a ``listen(0)`` socket's queue (the kernel keeps one or two
whatever the backlog says); the SYN after them is dropped."""

SILENT_HOLD_S = 30.0
"""How long the silent server holds a connection unanswered: longer than any patched bound."""


@contextlib.contextmanager
def unconnectable() -> Iterator[int]:
    """A port on 127.0.0.1 whose next ``connect`` does not complete."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = []
        try:
            for _ in range(QUEUE_FILLERS):
                filler = socket.socket()
                filler.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    filler.connect(("127.0.0.1", port))
                fillers.append(filler)
            time.sleep(0.1)  # the handshakes that will complete have completed
            yield port
        finally:
            for filler in fillers:
                filler.close()


@contextlib.contextmanager
def silent() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts and reads, and never answers."""
    release = threading.Event()
    held: list[socket.socket] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.1)

        def serve() -> None:
            while not release.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    return
                held.append(conn)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            yield listener.getsockname()[1]
        finally:
            release.set()
            thread.join(SILENT_HOLD_S)
            for conn in held:
                conn.close()
