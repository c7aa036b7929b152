"""The runner's proxied path end to end: bubblewrap with no network, the bridge inside, the
turn's proxy outside, a real HTTP upstream on the host's loopback.

A command run with an ``Egress`` reaches the upstream only through the bridge, with the real
key put back by the proxy; it sees only the placeholder; its exit code comes back through the
bridge; and the runner's bound still kills everything it started.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from veranda_dagster.sandbox.egress import X_API_KEY, Egress
from veranda_dagster.vendors.runner import SubprocessRunner

REAL = "sk-ant-api03-REAL-bridge-test-key-c4e2"


class Recording(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        Recording.seen.append((self.path, self.headers.get("x-api-key")))
        body = b"data: pong\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[str]:
    Recording.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _sandbox_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")


CLIENT = """
import os, sys, urllib.request
req = urllib.request.Request(
    os.environ["VENDOR_BASE_URL"] + "/v1/messages", data=b"{}",
    headers={"x-api-key": os.environ["VENDOR_KEY"]}, method="POST")
print(urllib.request.urlopen(req, timeout=10).read().decode())
print(open("/proc/self/environ").read())
sys.exit(3)
"""


def test_a_command_reaches_its_upstream_only_through_the_proxy(tmp_path: Path, upstream: str):
    (tmp_path / "client.py").write_text(CLIENT)
    env = {"PATH": "/usr/bin:/bin", "VENDOR_BASE_URL": upstream, "VENDOR_KEY": REAL}
    egress = Egress(
        base_url=upstream, keys={"VENDOR_KEY": REAL}, carriers={"VENDOR_KEY": (X_API_KEY,)}
    )
    out = SubprocessRunner().run(
        [sys.executable, "client.py"], str(tmp_path), env, None, 30, egress=egress
    )
    assert out.exit_code == 3, out.stderr  # the child's own code, through the bridge
    assert "data: pong" in out.stdout
    assert REAL not in out.stdout + out.stderr
    assert "VENDOR_KEY=veranda-placeholder-" in out.stdout
    assert "VENDOR_BASE_URL=http://127.0.0.1:" in out.stdout and upstream not in out.stdout
    assert Recording.seen == [("/api/v1/messages", REAL)]


def test_the_runners_bound_still_kills_everything_behind_the_bridge(tmp_path: Path, upstream: str):
    env = {"PATH": "/usr/bin:/bin", "VENDOR_BASE_URL": upstream, "VENDOR_KEY": REAL}
    egress = Egress(
        base_url=upstream, keys={"VENDOR_KEY": REAL}, carriers={"VENDOR_KEY": (X_API_KEY,)}
    )
    started = time.monotonic()
    out = SubprocessRunner().run(
        ["/bin/sh", "-c", "sleep 60 & sleep 60"], str(tmp_path), env, None, 2, egress=egress
    )
    assert out.timed_out and out.exit_code is None
    assert time.monotonic() - started < 15


def test_the_bridge_relays_at_most_its_bound_of_connections(tmp_path: Path, monkeypatch):
    """Past ``MAX_BRIDGED_CONNECTIONS`` a connection is closed at once; held ones keep going."""
    import socket

    from veranda_dagster.sandbox import bridge

    monkeypatch.setattr(bridge, "MAX_BRIDGED_CONNECTIONS", 1)
    path = str(tmp_path / "proxy.sock")
    proxy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    proxy.bind(path)
    proxy.listen(4)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    threading.Thread(target=bridge._serve, args=(listener, path), daemon=True).start()
    port = listener.getsockname()[1]
    try:
        first = socket.create_connection(("127.0.0.1", port), timeout=5)
        held, _ = proxy.accept()  # the first is relayed to the proxy and held open
        first.sendall(b"ping")
        assert held.recv(4) == b"ping"
        second = socket.create_connection(("127.0.0.1", port), timeout=5)
        assert second.recv(16) == b""  # closed by the bridge: over its bound
        held.sendall(b"pong")
        assert first.recv(4) == b"pong"
    finally:
        listener.close()
        proxy.close()
