"""Transport git against a forge that answers and then stalls or trickles.

A real loopback HTTP server accepts git's smart-HTTP request (``/info/refs``), sends the
headers and then either nothing or a byte now and then, for longer than any bound here. Every
transport entry point (a shared store's clone, a ticket clone without a store, ``ls-remote``)
must give up within its bound with a typed error, and every ``git-remote-http`` the test
started must be gone afterwards: found by the unique URL in its argv while the request is
held, then checked by PID once the call returned.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.fixtures.context.gitrepo import git, make_repo
from veranda_dagster.domain.clone import git_transport, object_cache, workspace
from veranda_dagster.domain.clone.git_command import GitError
from veranda_dagster.domain.clone.object_cache import ObjectCache, ObjectStoreError
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.sim.git_http import GitHttpServer

HELD_S = 20.0
"""How long the server holds a request: longer than every (patched) bound below, so only the
product's own give-up ends the call."""

KEEPALIVE_HELD_S = 2.5
"""The keep-alive server's answer lasts this long: past the patched ``LOW_SPEED_TIME_S``."""

PACE = {"stall": (HELD_S, 0.2), "trickle": (HELD_S, 2.0), "keepalive": (KEEPALIVE_HELD_S, 0.25)}
"""Per mode, how long a request is held and how often a byte is sent meanwhile: ``stall``
never sends; ``trickle`` sends a byte every two seconds (half ``LOW_SPEED_LIMIT_BYTES_S``);
``keepalive`` four bytes a second (above it, as upload-pack's keep-alives are while a forge
computes a pack) and then ends the answer."""


@dataclass
class StallingForge:
    """The server's state: the mode, the URL marker, the helper PIDs seen while held."""

    mode: str
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)
    release: threading.Event = field(default_factory=threading.Event)
    seen: set[int] = field(default_factory=set)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.marker}/app.git"


def helpers_of(marker: str) -> set[int]:
    """PIDs of ``git-remote-http*`` processes whose argv names ``marker`` (only this test's
    URL holds it), alive (a zombie has ended)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if comm.startswith("git-remote-http") and marker.encode() in cmdline and state != "Z":
            found.add(int(entry.name))
    return found


def _handler(forge: StallingForge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-git-upload-pack-advertisement")
            self.end_headers()
            self.wfile.flush()
            held, every = PACE[forge.mode]
            deadline = time.monotonic() + held
            while time.monotonic() < deadline and not forge.release.is_set():
                forge.seen |= helpers_of(forge.marker)
                if forge.mode != "stall":
                    try:
                        self.wfile.write(b"0")
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        return
                forge.release.wait(every)

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@pytest.fixture(params=["stall", "trickle"])
def forge(request: pytest.FixtureRequest) -> Iterator[StallingForge]:
    state = StallingForge(mode=request.param)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()


def _store_clone(forge: StallingForge, root: Path) -> None:
    ObjectCache(root / "_objects").refresh(forge.url)


def _ticket_clone(forge: StallingForge, root: Path) -> None:
    Workspace(root, "ENG-1", forge.url, "veranda/eng-1").clone()


def _ls_remote(forge: StallingForge, root: Path) -> None:
    Workspace(root, "ENG-1", forge.url, "veranda/eng-1").git("ls-remote", forge.url, cwd=root)


ENTRY_POINTS: list[tuple[str, Callable[[StallingForge, Path], None], type[GitError]]] = [
    ("shared store clone", _store_clone, ObjectStoreError),
    ("ticket clone", _ticket_clone, GitError),
    ("ls-remote", _ls_remote, GitError),
]
IDS = [name for name, _, _ in ENTRY_POINTS]


def _ends_within(call: Callable[[], None], error: type[GitError], bound_s: float) -> str:
    started = time.monotonic()
    with pytest.raises(error) as caught:
        call()
    elapsed = time.monotonic() - started
    assert elapsed < bound_s, f"gave up after {elapsed:.1f}s, bound {bound_s}s"
    return str(caught.value)


@pytest.mark.parametrize("forge", ["stall"], indirect=True)
@pytest.mark.parametrize(("name", "call", "error"), ENTRY_POINTS, ids=IDS)
def test_a_transport_timeout_kills_git_remote_http_too(
    forge: StallingForge,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    call: Callable[[StallingForge, Path], None],
    error: type[GitError],
) -> None:
    """The command's own bound (``GIT_TIMEOUT_S``, ``STORE_GIT_TIMEOUT_S``) patched to a
    second: the call fails with its typed timeout, and the ``git-remote-http`` helper that
    held the connection is killed with ``git`` (its process group), not left to the server."""
    monkeypatch.setattr(workspace, "GIT_TIMEOUT_S", 1.0)
    monkeypatch.setattr(object_cache, "STORE_GIT_TIMEOUT_S", 1.0)
    message = _ends_within(lambda: call(forge, tmp_path), error, 1.0 + 4.0)
    assert "timed out after 1s" in message
    assert forge.seen, "the server never saw git's helper: the test proves nothing"
    assert not (forge.seen & helpers_of(forge.marker)), f"{name}: git-remote-http survived"


@pytest.mark.parametrize(("name", "call", "error"), ENTRY_POINTS, ids=IDS)
def test_a_stalled_or_trickling_transfer_is_given_up_at_the_low_speed_bound(
    forge: StallingForge,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    call: Callable[[StallingForge, Path], None],
    error: type[GitError],
) -> None:
    """``LOW_SPEED_TIME_S`` patched to a second while the command's own timeout stays long:
    a server that sends nothing, or a byte every two seconds (under ``LOW_SPEED_LIMIT_BYTES_S``),
    is given up on within seconds, as a failed transfer, not held for the whole timeout."""
    monkeypatch.setattr(git_transport, "LOW_SPEED_TIME_S", 1)
    message = _ends_within(lambda: call(forge, tmp_path), error, 1.0 + 4.0)
    assert "too slow" in message.lower()
    assert "timed out" not in message


def test_a_healthy_forge_is_not_cut_by_the_stall_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The twin: the same bounds patched as tight (a second under the low-speed limit, a few
    seconds in all) against a real smart-HTTP server that answers at once; the store clone,
    its refresh and ``ls-remote`` all complete, with their output, through the group runner."""
    monkeypatch.setattr(git_transport, "LOW_SPEED_TIME_S", 1)
    monkeypatch.setattr(workspace, "GIT_TIMEOUT_S", 5.0)
    monkeypatch.setattr(object_cache, "STORE_GIT_TIMEOUT_S", 5.0)
    seed = make_repo(tmp_path / "seed", {"app.py": "print('hi')\n"})
    bare = tmp_path / "srv" / "acme" / "app.git"
    bare.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    with GitHttpServer(tmp_path / "srv", "s3cret") as server:
        url = server.url_for("acme/app")
        cache = ObjectCache(tmp_path / "ws" / "_objects")
        store = cache.refresh(url, "s3cret", "x-access-token")
        assert cache.refresh(url, "s3cret", "x-access-token") == store  # the fetch path
        head = git(store, "rev-parse", "refs/heads/main")
        ws = Workspace(tmp_path / "ws", "ENG-1", url, "b", "s3cret", "x-access-token")
        listed = ws.git("ls-remote", url, "refs/heads/main", cwd=tmp_path)
    assert head == git(seed, "rev-parse", "HEAD")
    assert listed == f"{head}\trefs/heads/main"


@pytest.mark.parametrize("forge", ["keepalive"], indirect=True)
def test_a_slow_forge_above_the_low_speed_limit_is_not_cut(
    forge: StallingForge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The twin: the same one-second ``LOW_SPEED_TIME_S`` against a server sending four
    bytes a second for 2.5 s (a forge computing a pack, keeping the connection alive): the
    transfer is not given up as too slow; it runs until the server ends its (garbage) answer."""
    monkeypatch.setattr(git_transport, "LOW_SPEED_TIME_S", 1)
    started = time.monotonic()
    with pytest.raises(GitError) as caught:
        _ls_remote(forge, tmp_path)
    assert time.monotonic() - started >= KEEPALIVE_HELD_S
    assert "too slow" not in str(caught.value).lower()
