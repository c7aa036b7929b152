"""``ChildProcess``: a child that ignores SIGINT is killed once ``stop_timeout_s`` has passed
(``DEV_STOP_TIMEOUT_S``, ``INTAKE_STOP_TIMEOUT_S`` are that bound for ``dagster dev`` and the
intake), a child that outlives SIGKILL (stuck in the kernel) holds ``stop`` no longer than
``KILL_WAIT_S``, and an error quotes only the log's last ``LOG_TAIL_CHARS``."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from veranda_dagster.sim import child_process
from veranda_dagster.sim.child_process import LOG_TAIL_CHARS, ChildProcess

STOP_TIMEOUT_S = 0.5
STOP_BOUND_S = 10.0
"""``stop`` returns well inside this once SIGKILL follows the grace period."""
STUBBORN = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "print('up', flush=True)\n"
    "time.sleep(60)\n"
)


def test_a_child_that_ignores_sigint_is_killed_after_its_grace(tmp_path: Path) -> None:
    child = ChildProcess(tmp_path / "child.log", STOP_TIMEOUT_S)
    child.spawn([sys.executable, "-c", STUBBORN], tmp_path, {"PATH": "/usr/bin:/bin"})
    _wait_up(child)
    proc = child.proc
    assert proc is not None and proc.poll() is None
    started = time.monotonic()
    child.stop()
    elapsed = time.monotonic() - started
    assert proc.poll() is not None and proc.returncode < 0  # killed, not exited
    assert STOP_TIMEOUT_S <= elapsed < STOP_BOUND_S
    assert child.proc is None


def _wait_up(child: ChildProcess) -> None:
    deadline = time.monotonic() + STOP_BOUND_S
    while "up" not in child.log_tail() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_child_that_outlives_sigkill_holds_stop_only_for_the_kill_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process in uninterruptible sleep is not reaped after SIGKILL; here the SIGKILL is
    withheld so the child stays alive, and ``stop`` must still return once ``KILL_WAIT_S`` is
    spent (with the log closed) rather than wait for it forever."""
    kill_wait_s = 0.4
    monkeypatch.setattr(child_process, "KILL_WAIT_S", kill_wait_s)
    real_killpg = os.killpg
    withheld: list[int] = []

    def killpg_without_sigkill(pgid: int, sig: int) -> None:
        if sig == signal.SIGKILL:
            withheld.append(pgid)
            return
        real_killpg(pgid, sig)

    monkeypatch.setattr(os, "killpg", killpg_without_sigkill)
    child = ChildProcess(tmp_path / "child.log", STOP_TIMEOUT_S)
    child.spawn([sys.executable, "-c", STUBBORN], tmp_path, {"PATH": "/usr/bin:/bin"})
    _wait_up(child)
    proc = child.proc
    assert proc is not None
    try:
        started = time.monotonic()
        child.stop()
        elapsed = time.monotonic() - started
        assert withheld == [proc.pid]
        assert proc.poll() is None  # still alive: the wait ended by its bound, not by a reap
        assert STOP_TIMEOUT_S + kill_wait_s <= elapsed < STOP_BOUND_S
        assert child.proc is None and child._log is None
    finally:
        real_killpg(proc.pid, signal.SIGKILL)
        proc.wait(STOP_BOUND_S)


def test_the_log_tail_is_bounded(tmp_path: Path) -> None:
    child = ChildProcess(tmp_path / "child.log", STOP_TIMEOUT_S)
    child.log_path.write_text("a" * LOG_TAIL_CHARS + "the end")
    tail = child.log_tail()
    assert len(tail) == LOG_TAIL_CHARS and tail.endswith("the end")
