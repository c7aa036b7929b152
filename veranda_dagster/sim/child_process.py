"""A command the simulation runs as a child it owns: in a session of its own, so ``stop``
reaches every process the child started and nothing else, its output in a log file whose tail
explains a failed start."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import IO

LOG_TAIL_CHARS = 3000
"""How much of the log an error quotes: the last traceback, not the whole start-up."""
KILL_WAIT_S = 10.0
"""How long to wait for the session to be reaped after SIGKILL."""


class ChildProcess:
    """``spawn`` starts the command; ``stop`` sends the session SIGINT, waits ``stop_timeout_s``,
    then SIGKILLs whatever of it is left (children mid-step included)."""

    def __init__(self, log_path: Path, stop_timeout_s: float) -> None:
        self.log_path = log_path
        self.stop_timeout_s = stop_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def spawn(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def spawn_until_ready(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        wait_ready: Callable[[float], None],
        timeout: float,
    ) -> None:
        """``spawn``, then ``wait_ready(timeout)``; whatever it raises stops the child first, so
        a failed start leaves no process behind."""
        self.spawn(argv, cwd, env)
        try:
            wait_ready(timeout)
        except BaseException:
            self.stop()
            raise

    def exit_code(self) -> int | None:
        """The child's exit code once it has exited, else ``None``."""
        return None if self.proc is None else self.proc.poll()

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(self.stop_timeout_s)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(KILL_WAIT_S)
        if self._log is not None:
            self._log.close()
            self._log = None
