"""Git's smart HTTP protocol on 127.0.0.1, in front of real bare repositories, token required.

``git http-backend`` (the CGI program that ships with git) does the protocol; this wraps it in a
loopback HTTP server that answers ``401`` with a ``WWW-Authenticate`` challenge unless the
request carries Basic credentials whose password is the expected token, as a forge does. It
lets a test push over HTTP with a real credential exchange and watch where the token travels
(``auth_seen`` counts authenticated requests, never storing a value).
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from veranda_dagster.sim.http_fake import SHUTDOWN_POLL_S

CGI_TIMEOUT_S = 60.0


class GitHttpServer:
    """``with GitHttpServer(root, token) as git:`` then clone ``git.url_for("acme/billing")``."""

    def __init__(self, root: str | Path, token: str) -> None:
        self.root = Path(root)
        self.token = token
        self.auth_seen = 0
        self.rejected = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server._serve(self)

            def do_POST(self) -> None:
                server._serve(self)

            def log_message(self, *args: Any) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(SHUTDOWN_POLL_S,), daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}"

    def url_for(self, repo: str) -> str:
        return f"{self.base_url}/{repo}.git"

    def _authorized(self, header: str) -> bool:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            _, _, password = base64.b64decode(value).decode().partition(":")
        except ValueError:
            return False
        return bool(self.token) and password == self.token

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        if not self._authorized(handler.headers.get("Authorization", "")):
            with self._lock:
                self.rejected += 1
            handler.send_response(401)
            handler.send_header("WWW-Authenticate", 'Basic realm="veranda-sim"')
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        with self._lock:
            self.auth_seen += 1
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        parts = urlsplit(handler.path)
        status, headers, payload = git_http_exchange(
            self.root,
            handler.command,
            parts.path,
            parts.query,
            handler.headers.get("Content-Type", ""),
            body,
            remote_user="x-access-token",
        )
        handler.send_response(status)
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def __enter__(self) -> GitHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def git_http_exchange(
    root: Path,
    method: str,
    path: str,
    query: str,
    content_type: str,
    body: bytes,
    *,
    remote_user: str,
) -> tuple[int, list[tuple[str, str]], bytes]:
    """One smart-HTTP exchange through ``git http-backend`` for the repositories under
    ``root``: ``(status, headers, payload)``. Pushes are allowed (``http.receivepack``)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_PROJECT_ROOT": str(root),
        "GIT_HTTP_EXPORT_ALL": "1",
        "REMOTE_USER": remote_user,
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(body)),
        "GIT_CONFIG_PARAMETERS": "'http.receivepack=true'",
    }
    proc = subprocess.run(
        ["git", "http-backend"],
        input=body,
        env=env,
        capture_output=True,
        timeout=CGI_TIMEOUT_S,
        check=False,
    )
    head, _, payload = proc.stdout.partition(b"\r\n\r\n")
    status = 200
    headers: list[tuple[str, str]] = []
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            headers.append((name, value.strip()))
    return status, headers, payload
