"""Where untrusted processes run: the agent CLI and every command of the repository.

``Sandbox.prepare`` turns (argv, cwd, env) into what to spawn: a bubblewrap command line built
from an allowlist policy (``policy.py``, ``bwrap.py``) and the exact environment, or the command
unchanged when sandboxing is off. Callers keep their own process-group and timeout handling.

``VERANDA_SANDBOX`` chooses, and the product fails closed:

* ``bwrap`` (the default): bubblewrap or a ``SandboxError`` naming why not and how to get it.
  A machine without a working sandbox runs no repository command and no agent at all, so a
  newcomer's laptop and a node that lost user namespaces both stop instead of exposing keys.
* ``off``: never sandbox; only when set explicitly (a debugging switch; the README says what
  it exposes).

There is no "use it when it works" mode: a fallback that runs unsandboxed when bubblewrap is
missing made every machine without it (any container under Docker's default seccomp profile)
run hostile code next to the worker's secrets while the run looked normal.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from veranda_dagster.sandbox.bwrap import bwrap_argv, bwrap_works, find_bwrap
from veranda_dagster.sandbox.policy import (
    SANDBOX_HOME,
    Network,
    SandboxError,
    SandboxPolicy,
    build_policy,
)

SANDBOX_ENV = "VERANDA_SANDBOX"
Mode = Literal["bwrap", "off"]
MODES: tuple[Mode, ...] = ("bwrap", "off")
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


def sandbox_mode(environ: Mapping[str, str] | None = None) -> Mode:
    raw = (os.environ if environ is None else environ).get(SANDBOX_ENV, "").strip() or "bwrap"
    if raw == "auto":
        raise SandboxError(
            f"{SANDBOX_ENV}=auto is gone: it ran everything unsandboxed where bubblewrap was "
            f"missing; use bwrap (the default) or, knowingly, off"
        )
    if raw not in MODES:
        raise SandboxError(f"{SANDBOX_ENV}={raw!r} is not one of {', '.join(MODES)}")
    return raw


def require_sandbox(environ: Mapping[str, str] | None = None) -> str | None:
    """``None`` when commands will run sandboxed (or ``off`` was chosen explicitly), else the
    one line a command that starts the product (``veranda dev``, ``veranda demo``) prints
    before refusing."""
    try:
        sandbox = Sandbox(sandbox_mode(environ))
    except SandboxError as exc:
        return str(exc)
    if sandbox.mode == "off":
        return None
    reason = sandbox.unavailable()
    if reason is None:
        return None
    return f"no working sandbox here ({reason}): {INSTALL_HINT}, or set {SANDBOX_ENV}=off knowingly"


@dataclass(frozen=True)
class Prepared:
    """What to spawn for one command."""

    argv: list[str]
    env: dict[str, str]
    policy: SandboxPolicy | None = None
    """The policy applied, or ``None`` when the command runs unsandboxed."""
    notes: list[str] = field(default_factory=list)

    @property
    def sandboxed(self) -> bool:
        return self.policy is not None


class Sandbox:
    """Builds sandboxed command lines; one per process is enough (the self-test is cached)."""

    def __init__(self, mode: Mode | None = None, bwrap: str | None = None) -> None:
        self.mode: Mode = mode or sandbox_mode()
        self.bwrap = bwrap or find_bwrap()

    def unavailable(self) -> str | None:
        """Why bubblewrap cannot be used here, or ``None`` when it can."""
        if self.bwrap is None:
            return "bubblewrap (bwrap) is not installed (looked in /usr/bin, PATH, $VERANDA_BWRAP)"
        return bwrap_works(self.bwrap)

    def prepare(
        self,
        argv: list[str],
        cwd: str | Path,
        env: Mapping[str, str],
        *,
        network: Network,
        writable: Iterable[str | Path] = (),
        hidden: Iterable[str | Path] = (),
        protect_git: bool = True,
        ro_binds: Mapping[str, str] | None = None,
        launcher: Sequence[str] = (),
    ) -> Prepared:
        """``hidden``: paths inside a writable bind the command must not see (a repository's
        own agent settings); ``protect_git=False`` lets the product's own sandboxed git write
        the clone's ``.git``; ``ro_binds``: host path -> path inside, read-only (the proxy's
        socket folder); ``launcher``: run in front of ``argv`` inside (the proxy's bridge),
        while the policy's toolchain is still found from ``argv``'s own binary."""
        if self.mode == "off":
            return Prepared(list(argv), dict(env), None, ["sandbox off (VERANDA_SANDBOX=off)"])
        reason = self.unavailable()
        if reason is not None:
            raise SandboxError(f"the sandbox cannot start: {reason}; {INSTALL_HINT}")
        policy = build_policy(
            list(argv),
            cwd,
            env,
            network=network,
            writable=writable,
            hidden=hidden,
            protect_git=protect_git,
            ro_binds=ro_binds,
        )
        inner = {**env, "HOME": _home(policy, env), "TMPDIR": "/tmp"}
        assert self.bwrap is not None
        command = [*launcher, *argv]
        return Prepared(bwrap_argv(policy, command, self.bwrap), inner, policy, policy.notes)


def _home(policy: SandboxPolicy, env: Mapping[str, str]) -> str:
    """A writable ``HOME`` the caller chose (a CLI's throwaway home) is kept; anything else
    becomes the sandbox's private, empty home."""
    home = env.get("HOME", "")
    real = os.path.realpath(home) if home else ""
    if real and any(real == w or real.startswith(w + "/") for w in policy.writable):
        return home
    return SANDBOX_HOME


__all__ = [
    "SANDBOX_ENV",
    "Prepared",
    "Sandbox",
    "SandboxError",
    "SandboxPolicy",
    "require_sandbox",
    "sandbox_mode",
]
