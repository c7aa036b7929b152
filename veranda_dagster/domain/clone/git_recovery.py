"""What a killed git leaves in a clone, found and cleared before a phase touches it.

A SIGKILL during ``git commit`` (an evicted pod, an OOM kill) leaves ``.git/index.lock``; every
later git command in that clone then fails ("Another git process seems to be running") until
someone deletes it by hand. A kill during ``git clone`` leaves a directory that looks like a
clone and is not one. Both are recovered here, and only when nothing alive still owns them: a
lock is removed only when no running git process works in that repository.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from veranda_dagster.domain.clone.clone_layout import PARTIAL_CLONE_MARK
from veranda_dagster.domain.clone.git_command import run_git
from veranda_dagster.domain.core.errors import InputError

LOCK_GLOBS = ("*.lock", "refs/**/*.lock", "logs/**/*.lock")
"""Where git takes its lock files (index, HEAD, config, packed-refs, shallow, each ref)."""


WHOLE_CLONE_CHECK_TIMEOUT_S: Final = 60.0
"""One sandboxed ``rev-parse``/``remote get-url`` of a clone a killed run left: milliseconds on
any clone, so a minute is a git stuck on a lock or a stalled disk; the clone then counts as
not whole and is made again."""


def lock_files(git_dir: Path) -> list[Path]:
    """Lock files really inside ``git_dir``: sandboxed git may write ``.git``, and a lock
    reached through a linked folder is some other file this process must not delete."""
    inside = os.path.realpath(git_dir) + os.sep
    return sorted(
        {
            p
            for pattern in LOCK_GLOBS
            for p in git_dir.glob(pattern)
            if p.is_file() and not p.is_symlink() and os.path.realpath(p).startswith(inside)
        }
    )


def _proc_entries() -> Iterator[Path]:
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                yield entry


def live_git_pids(repo: Path) -> list[int]:
    """Running git processes whose working directory is inside ``repo`` (or that name it on
    their command line): the ones that may hold its locks. Processes this user cannot inspect
    are not ours and cannot hold our clone's locks."""
    root = os.path.realpath(repo)
    found: list[int] = []
    for entry in _proc_entries():
        try:
            comm = (entry / "comm").read_text().strip()
            if comm != "git" and not comm.startswith("git-"):
                continue
            cwd = os.path.realpath(os.readlink(entry / "cwd"))
            cmdline = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + os.sep) or root in cmdline:
            found.append(int(entry.name))
    return found


def clear_stale_locks(repo: Path) -> list[Path]:
    """Remove the lock files in ``repo/.git`` when no live git owns them; returns what went."""
    git_dir = repo / ".git"
    if not git_dir.is_dir():
        return []
    locks = lock_files(git_dir)
    if not locks or live_git_pids(repo):
        return []
    for lock in locks:
        lock.unlink(missing_ok=True)
    return locks


def is_whole_clone(repo: Path) -> bool:
    """A checkout git can work in: its ``.git`` resolves a commit at HEAD and has an origin
    (asked of a sandboxed git: the clone's config may be anyone's)."""
    if not (repo / ".git" / "HEAD").is_file():
        return False
    for args in (
        ("rev-parse", "--verify", "--quiet", "HEAD^{commit}"),
        ("remote", "get-url", "origin"),
    ):
        try:
            proc = run_git(repo, args, timeout=WHOLE_CLONE_CHECK_TIMEOUT_S, check=False)
        except InputError:
            return False
        if proc.returncode != 0:
            return False
    return True


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def partial_clone_dir(path: Path) -> Path:
    return path.parent / f".{path.name}{PARTIAL_CLONE_MARK}{os.getpid()}"


def clear_partial_clones(path: Path) -> list[Path]:
    """Remove half-made clones of ``path`` whose cloning process is gone."""
    removed: list[Path] = []
    prefix = f".{path.name}{PARTIAL_CLONE_MARK}"
    if not path.parent.is_dir():
        return removed
    for leftover in path.parent.glob(f"{prefix}*"):
        pid = leftover.name[len(prefix) :]
        if pid.isdigit() and (int(pid) == os.getpid() or not _pid_alive(int(pid))):
            shutil.rmtree(leftover, ignore_errors=True)
            removed.append(leftover)
    return removed
