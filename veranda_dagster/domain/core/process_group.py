"""Commands that start helpers of their own, run so that a timeout ends all of them.

``subprocess.run(..., timeout=)`` kills only the process it started. A command that spawns
children (an agent's shells, a setup script's installers, ``git fetch``'s
``git-remote-https``) leaves them running past the timeout, holding the network connection,
the pipes and the files they write, until they end on their own. So each such command runs
as the leader of its own session (a process group of its own) and, on the timeout, the
whole group is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

REAP_S: Final = 5.0
"""After the group's kill, how long its leader and its output pipes are still waited for. A
killed group closes them in milliseconds; a process that left the group (its own ``setsid``)
may keep a pipe open for as long as it lives, and is left to it past this."""


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group ``proc`` leads (it was started with
    ``start_new_session=True``); a group already gone is not an error."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def end_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the group ``proc`` leads and wait at most ``REAP_S`` for its leader to be reaped
    (a leader that outlives SIGKILL is left to it past that)."""
    kill_group(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=REAP_S)


def run_in_group(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str],
    timeout: float,
) -> subprocess.CompletedProcess[bytes]:
    """``argv`` in a session of its own, stdout and stderr captured, stdin closed; a non-zero
    exit is returned. At ``timeout`` the whole group is killed and ``subprocess.TimeoutExpired``
    raised, once the group is reaped (at most ``REAP_S`` more)."""
    proc = subprocess.Popen(
        list(argv),
        cwd=str(cwd),
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        try:
            proc.communicate(timeout=REAP_S)
        except subprocess.TimeoutExpired:  # an escaped process holds a pipe: leave it to it
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=REAP_S)
        raise subprocess.TimeoutExpired(list(argv), timeout) from None
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
