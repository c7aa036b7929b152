"""The fake CI's command bound holds even when the repository's command starts a process in a
session of its own that keeps the output pipe open: the check run ends ``timed_out`` within
``KILLED_DRAIN_S`` of the kill, with what was printed; its twin, a command that finishes,
is a success."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from veranda_dagster.sim import fake_ci
from veranda_dagster.sim.fake_ci import FakeCI


@pytest.mark.parametrize("escapes", [True, False], ids=["escaped-process", "plain-command"])
def test_a_timed_out_command_with_an_escaped_process_ends_within_the_drain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, escapes: bool
) -> None:
    monkeypatch.setattr(fake_ci, "KILLED_DRAIN_S", 0.5)
    pid_file = tmp_path / "escaped.pid"
    escaped = tmp_path / "escaped.py"
    escaped.write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(20)\n"
    )
    command = tmp_path / "command.py"
    command.write_text(
        "import subprocess, sys, time\n"
        + (
            f"subprocess.Popen([sys.executable, {str(escaped)!r}], start_new_session=True)\n"
            "print('started', flush=True)\n"
            "time.sleep(20)\n"
            if escapes
            else "print('started', flush=True)\n"
        )
    )
    started = time.monotonic()
    try:
        out, conclusion = FakeCI(command_timeout_s=1.0)._command(
            [sys.executable, str(command)], tmp_path, "tests"
        )
        elapsed = time.monotonic() - started
    finally:
        deadline = time.monotonic() + 5
        while escapes and not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert out.startswith("started\n")
    assert conclusion == ("timed_out" if escapes else "success")
    assert elapsed < 1.0 + 0.5 + 3, f"the check run waited {elapsed:.1f} s"
