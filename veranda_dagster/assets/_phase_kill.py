"""A phase's hard bound without a process per step: kill what the phase started, stop its thread.

Steps run in the run worker's own process (the in-process executor), so a phase that runs past
its bound cannot be ended by killing its step process. What a phase does that can outlive a
timeout is (a) the subprocesses it started (agent CLIs, the repository's test commands, git),
each usually in a session of its own, and (b) its own Python thread, which would go on to
commit or push once a killed command returns. So at the bound the shell

1. SIGKILLs every process descended from the run worker that started after the phase did
   (found through ``/proc``; each one's whole process group, so a CLI's children go too),
   which leaves Dagster's own helpers (started before the phase) alone, and
2. raises ``PhaseTimeoutError`` inside the phase's thread (``PyThreadState_SetAsyncExc``): a
   thread blocked on a killed child wakes up and dies at its next Python instruction.

The step then fails with the timeout and is retried by its RetryPolicy, with nothing of the
first attempt still running.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from pathlib import Path

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, int] | None:
    """``(parent pid, start time in clock ticks since boot)`` of ``pid``."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw.rpartition(")")[2].split()  # the command name may hold spaces and parens
    return int(fields[1]), int(fields[19])


def now_ticks() -> int:
    """The current time in the clock ticks ``/proc/<pid>/stat`` counts start times in."""
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return int(uptime * _CLOCK_TICKS)


def descendants(root: int, started_after: int) -> list[int]:
    """Processes under ``root`` (children, their children, …) started at or after the tick
    ``started_after``."""
    parents: dict[int, int] = {}
    starts: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (info := _stat(int(entry.name))) is not None:
            parents[int(entry.name)], starts[int(entry.name)] = info
    found: list[int] = []
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found.append(pid)
                frontier.append(pid)
    return [pid for pid in found if starts.get(pid, 0) >= started_after]


def kill_started_since(started_after: int, root: int | None = None) -> list[int]:
    """SIGKILL the process groups of ``root``'s descendants started since ``started_after``
    (never ``root``'s own group); returns the pids found."""
    root = os.getpid() if root is None else root
    own_group = os.getpgid(root)
    pids = descendants(root, started_after)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            group = os.getpgid(pid)
            if group != own_group:
                os.killpg(group, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
    return pids


def stop_thread(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    """Raise ``exc_type`` in ``thread`` at its next Python instruction. Not waited for: a
    thread blocked in C (a lock, a read from a killed child) gets there on its own, and the
    step must fail at its bound, not at the thread's convenience."""
    if thread.ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread.ident), ctypes.py_object(exc_type)
        )
