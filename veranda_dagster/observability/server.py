"""The one HTTP port per pod: ``/healthz``, ``/readyz`` and ``/metrics``.

Nothing calls into Veranda, so this port exists only for the kubelet's probes and the
Prometheus scrape. Liveness is local (the process answers); it never touches Linear, Slack,
GitHub or Postgres, or their outages would become restart loops. Readiness asks the one thing
a pod needs to do its work: can it list runs on the Dagster instance, within a short bound.

Stdlib ``http.server`` on a thread, not an ASGI stack: three routes do not justify one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from veranda_dagster.domain.core.bounds import OPS_SOCKET_TIMEOUT_S, READINESS_TIMEOUT_S
from veranda_dagster.observability.metrics import default_metrics

ReadinessCheck = Callable[[], None]
"""Returns when ready; raises (anything) with a reason when not."""


class InstanceReadiness:
    """Ready when the configured Dagster instance's run storage answers a one-row query.

    One instance is kept across probes (a new one per probe would open a new database engine
    every 10 s); after a failure it is disposed, so the next probe reconnects from scratch.
    """

    def __init__(self) -> None:
        self._instance: Any = None
        self._lock = threading.Lock()

    def __call__(self) -> None:
        import dagster as dg

        with self._lock:
            if self._instance is None:
                self._instance = dg.DagsterInstance.get()
            instance = self._instance
        try:
            instance.get_runs(limit=1)
        except Exception:
            with self._lock:
                if self._instance is instance:
                    self._instance = None
            instance.dispose()
            raise


def check_with_timeout(check: ReadinessCheck, timeout_s: float) -> str | None:
    """``None`` when ready, else a short reason. A hung storage call counts as not ready."""
    box: dict[str, BaseException] = {}

    def target() -> None:
        try:
            check()
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=target, name="veranda-readyz", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        return f"instance check exceeded {timeout_s:g} s"
    if "error" in box:
        exc = box["error"]
        if getattr(exc, "safe_text", False):  # our own reason, written to be shown
            return str(exc)
        # The type only: an exception text may carry a connection string with a password.
        return f"instance check failed: {type(exc).__name__}"
    return None


def _handler(
    registry: CollectorRegistry,
    readiness: ReadinessCheck,
    timeout_s: float,
    socket_timeout_s: float = OPS_SOCKET_TIMEOUT_S,
) -> type[BaseHTTPRequestHandler]:
    class OpsHandler(BaseHTTPRequestHandler):
        server_version = "veranda-ops"
        timeout = socket_timeout_s  # an idle connection is closed, its thread freed

        def log_message(self, format: str, *args: object) -> None:  # probes every 10 s: quiet
            return

        def _send(self, code: int, body: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/healthz":
                self._send(200, b"ok\n", "text/plain; charset=utf-8")
            elif path == "/readyz":
                reason = check_with_timeout(readiness, timeout_s)
                if reason is None:
                    self._send(200, b"ready\n", "text/plain; charset=utf-8")
                else:
                    self._send(503, f"not ready: {reason}\n".encode(), "text/plain; charset=utf-8")
            elif path == "/metrics":
                encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
                self._send(200, encoder(registry), content_type)
            else:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")

        do_HEAD = do_GET

    return OpsHandler


class OpsServer:
    """The port, served from a daemon thread; ``port=0`` picks a free one (tests)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        registry: CollectorRegistry | None = None,
        readiness: ReadinessCheck | None = None,
        readiness_timeout_s: float | None = None,
        socket_timeout_s: float = OPS_SOCKET_TIMEOUT_S,
    ) -> None:
        """``readiness_timeout_s`` defaults to ``READINESS_TIMEOUT_S``, read when the server
        is made (so the bound in force is the module's)."""
        reg = registry if registry is not None else default_metrics().registry
        if readiness_timeout_s is None:
            readiness_timeout_s = READINESS_TIMEOUT_S
        handler = _handler(
            reg, readiness or InstanceReadiness(), readiness_timeout_s, socket_timeout_s
        )
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        host = self.httpd.server_address[0]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{self.port}"

    def start(self) -> OpsServer:
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="veranda-ops", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> OpsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
