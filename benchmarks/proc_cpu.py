"""CPU of a whole process tree, for benchmarks that start processes which start processes.

``RUSAGE_CHILDREN`` counts a process only once its parent waited for it, and only up the chain
of parents that waited: a run worker the daemon never reaps, a step process still alive when
the benchmark reads the counter, or a sandbox the run worker started in its own session is
missing from it (the old orchestration table counted 19-34 % of the real CPU that way). So:

* ``Reaper`` makes this process the child subreaper of everything it starts and reaps whatever
  is reparented to it, so an orphan's CPU lands in ``RUSAGE_CHILDREN`` when it exits;
* ``tree_cpu`` reads the live descendants' own and reaped children's CPU from ``/proc`` and adds
  ``RUSAGE_CHILDREN``: the tree's CPU so far, at any moment, without waiting for it to exit;
* ``drain`` stops every descendant and waits (bounded) until none is left, so the final count
  is complete.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import threading
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
REAP_INTERVAL_S = 0.2
"""How often the reaper collects orphans; their CPU is read from ``/proc`` meanwhile."""
DRAIN_TIMEOUT_S = 60.0
"""How long ``drain`` waits for terminated descendants before it kills them outright."""
MAX_PROC_ENTRIES = 100_000
"""``/proc`` entries read per snapshot; a machine with more processes is not measurable here."""
_TICKS = os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    """CPU seconds of every descendant this process has reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _stat(pid: int) -> tuple[int, float] | None:
    """``(parent pid, own + waited-for children's CPU seconds)`` of ``pid``, or ``None``."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # the command name may hold spaces
    ppid = int(fields[1])
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return ppid, (utime + stime + cutime + cstime) / _TICKS


def descendants(root: int | None = None) -> dict[int, float]:
    """Every live (or not yet reaped) descendant of ``root`` (this process by default), with
    its CPU seconds so far (its own and what it reaped)."""
    root = os.getpid() if root is None else root
    table: dict[int, tuple[int, float]] = {}
    for n, entry in enumerate(os.scandir("/proc")):
        if n >= MAX_PROC_ENTRIES:
            raise RuntimeError(f"/proc holds more than {MAX_PROC_ENTRIES} entries")
        if entry.name.isdigit() and (found := _stat(int(entry.name))) is not None:
            table[int(entry.name)] = found
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[int, float] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in out:
            out[pid] = table[pid][1]
            todo.extend(children.get(pid, []))
    return out


def tree_cpu() -> float:
    """CPU seconds of this process's whole tree of descendants so far, live and reaped."""
    return children_cpu() + sum(descendants().values())


class Reaper:
    """Subreaper of everything this process starts; reaps orphans as they are reparented."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.reap()
            time.sleep(REAP_INTERVAL_S)

    def reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.reap()


def drain(timeout_s: float = DRAIN_TIMEOUT_S) -> list[int]:
    """Terminate every descendant and wait until none is left (reaping them, so their CPU is
    counted), killing what is still there after ``timeout_s``. Returns the pids it had to
    kill."""
    for pid in descendants():
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while descendants() and time.monotonic() < deadline:
        time.sleep(REAP_INTERVAL_S)
        _reap_all()
    killed = list(descendants())
    for pid in killed:
        _signal(pid, signal.SIGKILL)
    while descendants() and time.monotonic() < deadline + timeout_s:
        time.sleep(REAP_INTERVAL_S)
        _reap_all()
    return killed


def _reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
