"""A unix socket (mode 0600) served on a daemon thread, each connection handed to ``serve``.

Both proxies a sandbox reaches through a bound socket (the per-turn credential proxy and the
setup step's registry proxy) are this server around their own ``serve``; the socket, not a
port, is what keeps them off every network namespace but the one the socket is bound into.
"""

from __future__ import annotations

import os
import socket
import socketserver
import threading
from pathlib import Path
from typing import Protocol


class ConnectionHandler(Protocol):
    def serve(self, conn: socket.socket) -> None: ...


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, handler: ConnectionHandler) -> None:
        self.handler = handler
        super().__init__(path, _Handler)
        os.chmod(path, 0o600)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        self.server.handler.serve(self.request)


class UnixSocketServer:
    """``handler.serve`` for every connection to ``path``, from ``start`` until ``stop``."""

    def __init__(self, path: Path, handler: ConnectionHandler, thread_name: str) -> None:
        self._server = _Server(str(path), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=thread_name, daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
