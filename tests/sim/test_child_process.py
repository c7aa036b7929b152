"""``ChildProcess``: a child that ignores SIGINT is killed once ``stop_timeout_s`` has passed
(``DEV_STOP_TIMEOUT_S``, ``INTAKE_STOP_TIMEOUT_S`` are that bound for ``dagster dev`` and the
intake), and an error quotes only the log's last ``LOG_TAIL_CHARS``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

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
    deadline = time.monotonic() + STOP_BOUND_S
    while "up" not in child.log_tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc = child.proc
    assert proc is not None and proc.poll() is None
    started = time.monotonic()
    child.stop()
    elapsed = time.monotonic() - started
    assert proc.poll() is not None and proc.returncode < 0  # killed, not exited
    assert STOP_TIMEOUT_S <= elapsed < STOP_BOUND_S
    assert child.proc is None


def test_the_log_tail_is_bounded(tmp_path: Path) -> None:
    child = ChildProcess(tmp_path / "child.log", STOP_TIMEOUT_S)
    child.log_path.write_text("a" * LOG_TAIL_CHARS + "the end")
    tail = child.log_tail()
    assert len(tail) == LOG_TAIL_CHARS and tail.endswith("the end")
