"""The CPU of a command and of every process it starts, sandboxed ones included.

Why not ``getrusage(RUSAGE_CHILDREN)`` (or GNU ``time``'s ``%U %S``) alone: the pack runs every
git command inside bubblewrap with its own pid namespace (``--unshare-pid``), and the CPU of a
process in such a namespace never reaches the parent's children totals (bwrap's init in the
namespace is not reaped the way ``wait`` accounting needs: ``bwrap --unshare-pid -- python -c
'sum(range(3e7))'`` shows 0.00 s under ``time`` and 0.25 s without the flag). So rusage saw the
pack's Python and nothing of its ``git ls-tree``, ``cat-file`` and ``grep``.

A control group counts every task in it, whatever namespace it forks into. When this machine
lets us make one (root, cgroup v1 ``cpuacct`` or cgroup v2), the command joins a fresh group
before it execs and its CPU is the group's usage; else the rusage figure is returned and
``method`` says so. The group is removed afterwards.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_V1 = Path("/sys/fs/cgroup/cpuacct")
CGROUP_V2 = Path("/sys/fs/cgroup/unified")
TIME_BIN = "/usr/bin/time"
RUN_TIMEOUT_S = 600.0
"""One measured command: a pack or a grep over a large tree takes seconds, not minutes."""


@dataclass(frozen=True)
class Measured:
    returncode: int
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    """The command's own peak resident memory (GNU ``time``'s ``%M``), not its children's."""
    method: str
    """``cgroup`` (every process counted) or ``rusage`` (sandboxed children missed)."""


def _group_root() -> tuple[Path, str] | None:
    """Where a fresh group can be made, and the file holding its CPU nanoseconds/usec."""
    if (CGROUP_V1 / "cpuacct.usage").is_file() and os.access(CGROUP_V1, os.W_OK):
        return CGROUP_V1, "cpuacct.usage"
    if (CGROUP_V2 / "cgroup.procs").is_file() and os.access(CGROUP_V2, os.W_OK):
        return CGROUP_V2, "cpu.stat"
    return None


def _usage_seconds(group: Path, name: str) -> float:
    text = (group / name).read_text()
    if name == "cpuacct.usage":
        return int(text.strip()) / 1e9
    fields = dict(line.split() for line in text.splitlines() if line.strip())
    return int(fields.get("usage_usec", "0")) / 1e6


def measure(argv: list[str], *, cwd: Path | None = None, stdout: object = None) -> Measured:
    """Run ``argv`` to completion (stdout to ``stdout``, a file object, or discarded; stderr
    captured into the error raised by the caller) and measure it."""
    root = _group_root()
    group = None
    if root is not None:
        group = root[0] / f"veranda-bench-{os.getpid()}-{time.monotonic_ns()}"
        try:
            group.mkdir()
        except OSError:
            group = None
    usage_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"veranda-usage-{os.getpid()}"
    timer = [TIME_BIN, "-f", "%M %U %S", "-o", str(usage_file)] if Path(TIME_BIN).exists() else []

    def join_group() -> None:
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [*timer, *argv],
            cwd=cwd,
            stdout=stdout if stdout is not None else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=join_group if group is not None else None,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak_kb = after.ru_maxrss
        if timer and usage_file.exists():
            fields = usage_file.read_text().split()[-3:]
            peak_kb = int(fields[0])
            cpu = float(fields[1]) + float(fields[2])
        method = "rusage"
        if group is not None and root is not None:
            cpu, method = _usage_seconds(group, root[1]), "cgroup"
    finally:
        usage_file.unlink(missing_ok=True)
        if group is not None:
            _remove_group(group)
    if proc.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(argv)}` exited {proc.returncode}: "
            f"{proc.stderr.decode(errors='replace').strip()[-500:]}"
        )
    return Measured(proc.returncode, seconds, cpu, peak_kb / 1024, method)


REMOVE_TRIES = 50
"""A group is removable once its last task is gone; the kernel may lag the exit briefly."""


def _remove_group(group: Path) -> None:
    for _ in range(REMOVE_TRIES):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.01)
