"""A docker engine for the container tests: the running one, or one this session starts.

The CI machines have no engine running and no container registry: ``.ci/run`` installs Debian's
``docker.io`` and this module starts ``dockerd`` (unix socket only, nothing on TCP) when no
engine answers, and stops it afterwards. Only a daemon this module started is ever stopped,
by the ``Popen`` it holds, never by name.

Under ``pytest -n 2`` both workers may need the engine. Each holds a shared ``flock`` on
``ENGINE_LOCK`` while it uses it; the worker that started the daemon takes the lock exclusively
(waiting at most ``ENGINE_RELEASE_TIMEOUT_S`` for the other to finish) before stopping it. The
image build is serialised with ``BUILD_LOCK``: the second worker then finds every layer cached.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

DOCKER = "/usr/bin/docker"
"""Debian's client, paired with its engine (20.10): a newer standalone CLI found first on PATH
may lack the buildx plugin that ``DOCKER_BUILDKIT=1`` then needs."""
DOCKERD = "/usr/sbin/dockerd"
DOCKER_SOCKET = "unix:///var/run/docker.sock"

ENGINE_START_TIMEOUT_S = 60.0
"""The API answers about 1 s after start on the CI machines."""
ENGINE_POLL_S = 0.5
ENGINE_STOP_TIMEOUT_S = 30.0
ENGINE_RELEASE_TIMEOUT_S = 1800.0
"""How long the worker that started the daemon waits for the other to stop using it."""
INFO_TIMEOUT_S = 10.0

LOCK_DIR = Path("/tmp")
START_LOCK = LOCK_DIR / "veranda-container-tests.start.lock"
ENGINE_LOCK = LOCK_DIR / "veranda-container-tests.engine.lock"
BUILD_LOCK = LOCK_DIR / "veranda-container-tests.build.lock"


class EngineUnavailable(RuntimeError):
    """No engine answers and none can be started here (no docker.io, not root)."""


def engine_answers() -> bool:
    if not os.access(DOCKER, os.X_OK):
        return False
    try:
        proc = subprocess.run(
            [DOCKER, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            timeout=INFO_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


@contextlib.contextmanager
def flocked(path: Path, mode: int, timeout_s: float) -> Iterator[IO[str]]:
    """``flock(path, mode)``, retried until ``timeout_s``; released on exit."""
    handle = path.open("a")
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                fcntl.flock(handle, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{path} still locked after {timeout_s:.0f} s") from None
                time.sleep(ENGINE_POLL_S)
        yield handle
    finally:
        handle.close()


@dataclass
class StartedEngine:
    """The daemon this process started, and where it logs."""

    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=ENGINE_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=ENGINE_STOP_TIMEOUT_S)


def start_engine(log: Path) -> StartedEngine:
    if not os.access(DOCKERD, os.X_OK) or not os.access(DOCKER, os.X_OK):
        raise EngineUnavailable(f"{DOCKERD} or {DOCKER} missing: apt-get install docker.io")
    if os.geteuid() != 0:
        raise EngineUnavailable("no docker engine answers and only root can start dockerd")
    with log.open("ab") as out:
        process = subprocess.Popen(
            [DOCKERD, "--host", DOCKER_SOCKET],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    engine = StartedEngine(process, log)
    deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if engine_answers():
            return engine
        if process.poll() is not None:
            break
        time.sleep(ENGINE_POLL_S)
    if process.poll() is None:
        engine.stop()
    tail = log.read_text(errors="replace")[-2000:]
    raise EngineUnavailable(f"dockerd did not answer within {ENGINE_START_TIMEOUT_S} s:\n{tail}")


@contextlib.contextmanager
def docker_engine(log: Path) -> Iterator[None]:
    """An answering engine for the ``with`` block: the running one, else one started here.

    ``START_LOCK`` makes "is one running, else start one" and "stop the one I started" atomic
    against each other; ``ENGINE_LOCK``, held shared by every user, makes the stop wait for
    the other worker."""
    started: StartedEngine | None = None
    users = contextlib.ExitStack()
    with flocked(START_LOCK, fcntl.LOCK_EX, ENGINE_RELEASE_TIMEOUT_S):
        if not engine_answers():
            started = start_engine(log)
        users.enter_context(flocked(ENGINE_LOCK, fcntl.LOCK_SH, ENGINE_RELEASE_TIMEOUT_S))
    try:
        yield
    finally:
        users.close()
        if started is not None:
            with (
                flocked(START_LOCK, fcntl.LOCK_EX, ENGINE_RELEASE_TIMEOUT_S),
                flocked(ENGINE_LOCK, fcntl.LOCK_EX, ENGINE_RELEASE_TIMEOUT_S),
            ):
                started.stop()
