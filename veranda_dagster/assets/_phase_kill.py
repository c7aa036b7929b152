"""A phase's hard bound without a process per step: kill what the phase started, stop its thread.

Steps run in the run worker's own process (the in-process executor), so a phase that runs past
its bound cannot be ended by killing its step process. What a phase does that can outlive a
timeout is (a) the subprocesses it started (agent CLIs, the repository's test commands, git),
each usually in a session of its own, and (b) its own Python thread, which would go on to
commit or push once a killed command returns. So at the bound the shell

1. SIGKILLs every process descended from the run worker that was not already there when the
   phase started (found through ``/proc``; each one's whole process group, so a CLI's children
   go too), which leaves Dagster's own helpers (started before the phase) alone, and
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

Process = tuple[int, int]
"""``(pid, start time in clock ticks since boot)``: a pid reused later is another process."""


def _stat(pid: int) -> tuple[int, int] | None:
    """``(parent pid, start time in clock ticks since boot)`` of ``pid``."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw.rpartition(")")[2].split()  # the command name may hold spaces and parens
    return int(fields[1]), int(fields[19])


def descendants(root: int) -> list[Process]:
    """Processes under ``root`` (children, their children, …), as they are now."""
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
    return [(pid, starts[pid]) for pid in found]


def already_running(root: int | None = None) -> frozenset[Process]:
    """What ``root`` (this process) has running now: taken when a phase starts, so that at its
    bound exactly what the phase started is killed. A snapshot, not a start-time comparison:
    start times tick in hundredths of a second, so a helper started in the phase's first tick
    would otherwise count as the phase's."""
    return frozenset(descendants(os.getpid() if root is None else root))


def kill_started_since(before: frozenset[Process], root: int | None = None) -> list[int]:
    """SIGKILL the process groups of ``root``'s descendants that are not in ``before`` (never
    ``root``'s own group); returns the pids found."""
    root = os.getpid() if root is None else root
    own_group = os.getpgid(root)
    pids = [pid for pid, start in descendants(root) if (pid, start) not in before]
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
