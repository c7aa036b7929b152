"""Two bounds of starting a sandboxed command, hit for real.

``bwrap.SELF_TEST_TIMEOUT_S``: the empty-sandbox check that decides whether anything may run
here, against a "bubblewrap" that never returns (namespaces blocked, a hung setuid helper);
the check gives up at the bound with the reason instead of hanging the worker's start.

``bridge.CONNECT_TIMEOUT_S``: the bridge's connect to the proxy's socket. A unix socket's
connect blocks while the listener's accept queue is full; under the bound it is refused at
once instead (``EAGAIN``), so a wedged proxy fails the CLI's request, never hangs the relay.
Each has its twin: a bubblewrap that works, a proxy that accepts.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from veranda_dagster.sandbox import bridge, bwrap

BOUND_S = 0.5
SLACK_S = 2.0


def _fake_bwrap(folder: Path, body: str) -> str:
    """An executable standing in for bubblewrap (``bwrap_works`` caches per path: each test
    gets its own)."""
    path = folder / "bwrap"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_a_sandbox_self_test_that_hangs_gives_up_at_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "SELF_TEST_TIMEOUT_S", BOUND_S)
    hung = _fake_bwrap(tmp_path, "exec sleep 30")
    started = time.monotonic()
    reason = bwrap.bwrap_works(hung)
    assert time.monotonic() - started < BOUND_S + SLACK_S
    assert reason is not None and reason.startswith("TimeoutExpired")
    assert f"{BOUND_S:g} seconds" in reason


def test_a_sandbox_self_test_that_starts_is_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "SELF_TEST_TIMEOUT_S", BOUND_S)
    assert bwrap.bwrap_works(_fake_bwrap(tmp_path, "exit 0")) is None


@contextlib.contextmanager
def _proxy_socket(tmp_path: Path, full: bool) -> Iterator[tuple[str, socket.socket]]:
    """A unix listener; ``full``: its accept queue filled and never drained."""
    path = str(tmp_path / "proxy.sock")
    fillers: list[socket.socket] = []
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(path)
        listener.listen(0)
        for _ in range(2 if full else 0):
            filler = socket.socket(socket.AF_UNIX)
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(path)
            fillers.append(filler)
        try:
            yield path, listener
        finally:
            for filler in fillers:
                filler.close()


def _relay_once(path: str) -> tuple[float, bytes, bool]:
    """One connection through ``bridge._relay``: (seconds, what the client read, slot back)."""
    slots = threading.BoundedSemaphore(1)
    slots.acquire()
    client, ours = socket.socketpair()
    started = time.monotonic()
    relay = threading.Thread(target=bridge._relay, args=(client, path, slots), daemon=True)
    relay.start()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        # a relay that gave up at once (the unix connect fails with EAGAIN on a full queue)
        # may have closed the client's end before the request is written
        ours.sendall(b"GET / HTTP/1.1\r\n\r\n")
        ours.shutdown(socket.SHUT_WR)
    relay.join(BOUND_S + SLACK_S)
    took = time.monotonic() - started
    ours.settimeout(1)
    try:
        got = ours.recv(100)
    except OSError as exc:
        got = f"({type(exc).__name__})".encode()
    ours.close()
    returned = slots.acquire(blocking=False)
    return took, got if not relay.is_alive() else b"(still relaying)", returned


def test_the_bridge_gives_up_on_a_proxy_that_accepts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bridge, "CONNECT_TIMEOUT_S", BOUND_S)
    with _proxy_socket(tmp_path, full=True) as (path, _):
        took, got, returned = _relay_once(path)
    assert took < BOUND_S + SLACK_S and returned
    assert got in (b"", b"(ConnectionResetError)")  # the CLI's connection is closed, not held
    assert "veranda bridge: proxy unreachable" in capsys.readouterr().err


def test_the_bridge_relays_to_a_proxy_that_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bridge, "CONNECT_TIMEOUT_S", BOUND_S)

    def proxy(listener: socket.socket) -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(100)
            conn.sendall(b"HTTP/1.1 200 OK\r\n\r\nok")

    with _proxy_socket(tmp_path, full=False) as (path, listener):
        answering = threading.Thread(target=proxy, args=(listener,), daemon=True)
        answering.start()
        took, got, returned = _relay_once(path)
        answering.join(SLACK_S)
    assert got == b"HTTP/1.1 200 OK\r\n\r\nok" and returned and took < BOUND_S + SLACK_S
    assert capsys.readouterr().err == ""
