"""A ``SandboxPolicy`` as a bubblewrap command line, and whether bubblewrap works here.

bubblewrap (Debian's ``bubblewrap``) builds the view from nothing: an empty root, then each
allowed path bound in. New user, pid, ipc, uts, cgroup and network namespaces (the network one
holds only loopback: no host service, no abstract socket of the host); ``/proc`` is a fresh
procfs of the new pid namespace, so ``/proc/<pid>/environ`` shows only the sandbox's own
processes; ``--new-session`` stops a command from pushing keystrokes into a terminal;
``--die-with-parent`` and the pid namespace take every process the command started down with
it when its bound kills it.

bwrap's own init runs as pid 1 *inside* the namespace and keeps the environment bwrap was
started with, readable at ``/proc/1/environ``; so bwrap is started with exactly the sandbox's
environment and no ``--setenv`` (argv is world-readable too).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from veranda_dagster.sandbox.policy import (
    ETC_ENTRIES,
    SANDBOX_UID,
    SYSTEM_DIRS,
    SandboxPolicy,
)

SELF_TEST_TIMEOUT_S = 10.0
"""Starting an empty sandbox takes milliseconds; longer means namespaces are blocked."""


def bwrap_argv(policy: SandboxPolicy, argv: list[str], bwrap: str = "bwrap") -> list[str]:
    out = [
        bwrap,
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--uid", str(SANDBOX_UID),
        "--gid", str(SANDBOX_UID),
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname", "veranda-sandbox",
    ]  # fmt: skip
    out.append("--unshare-net")  # always: the only ``Network`` is "none"
    for name in SYSTEM_DIRS:
        system = Path(name)
        if system.is_symlink():
            out += ["--symlink", os.readlink(system), name]
        elif system.is_dir():
            out += ["--ro-bind", name, name]
    for entry in ETC_ENTRIES:
        out += ["--ro-bind-try", f"/etc/{entry}", f"/etc/{entry}"]
    out += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    out += ["--tmpfs", policy.home]
    for path in policy.readable:
        out += ["--ro-bind", path, path]
    for path in policy.writable:
        out += ["--bind", path, path]
        git_dir = Path(path) / ".git"
        if policy.protect_git and git_dir.is_dir() and not git_dir.is_symlink():
            out += ["--ro-bind", str(git_dir), str(git_dir)]
    for path in policy.hidden:
        out += _masked(Path(path))
    for source, dest in policy.ro_binds.items():
        out += ["--ro-bind", source, dest]
    out += ["--chdir", policy.cwd, "--", *argv]
    return out


def _masked(path: Path) -> list[str]:
    """A folder becomes an empty read-only one, anything else an empty read-only file; a link
    is replaced where it stands, never followed (it may point out of the clone)."""
    if path.is_dir() and not path.is_symlink():
        return ["--tmpfs", str(path), "--remount-ro", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


BWRAP_ENV = "VERANDA_BWRAP"
"""Where bubblewrap is, when not in the system folders (an operator's own build)."""
SYSTEM_BWRAP = ("/usr/bin/bwrap", "/bin/bwrap")


def find_bwrap() -> str | None:
    """``$VERANDA_BWRAP`` when set (and only it), else the system's bubblewrap, else one on
    ``PATH``: the system copy comes first so a folder planted early on ``PATH`` cannot stand in
    a look-alike that sandboxes nothing."""
    named = os.environ.get(BWRAP_ENV, "").strip()
    if named:
        return named if os.access(named, os.X_OK) else None
    system = next((p for p in SYSTEM_BWRAP if os.access(p, os.X_OK)), None)
    return system or shutil.which("bwrap")


@functools.cache
def bwrap_works(bwrap: str) -> str | None:
    """``None`` when an empty sandbox starts here, else the reason it does not (user
    namespaces disabled, a seccomp profile that forbids ``unshare``, a masked ``/proc``)."""
    policy = SandboxPolicy(cwd="/")
    try:
        proc = subprocess.run(
            bwrap_argv(policy, ["/bin/true"], bwrap),
            env={"PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=SELF_TEST_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if proc.returncode != 0:
        return (proc.stderr.strip() or f"exit {proc.returncode}")[-300:]
    return None
