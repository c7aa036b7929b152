"""Where untrusted processes run: the agent CLI and every command of the repository.

``Sandbox.prepare`` turns (argv, cwd, env) into what to spawn: a bubblewrap command line built
from an allowlist policy (``policy.py``, ``bwrap.py``) and the exact environment, or the command
unchanged when sandboxing is off. Callers keep their own process-group and timeout handling.

``VERANDA_SANDBOX`` chooses:

* ``auto`` (default): bubblewrap when an empty sandbox starts on this machine, otherwise run
  unsandboxed and say so in every result (``sandboxed: false``) and the log. A laptop without
  user namespaces can still run the demo.
* ``bwrap``: bubblewrap or a ``SandboxError`` naming why not; what production sets, so a node
  that lost user namespaces fails closed instead of exposing its keys.
* ``off``: never (a debugging switch; the README says what it exposes).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
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

log = logging.getLogger(__name__)

SANDBOX_ENV = "VERANDA_SANDBOX"
Mode = Literal["auto", "bwrap", "off"]
MODES: tuple[Mode, ...] = ("auto", "bwrap", "off")


def sandbox_mode(environ: Mapping[str, str] | None = None) -> Mode:
    raw = (os.environ if environ is None else environ).get(SANDBOX_ENV, "").strip() or "auto"
    if raw not in MODES:
        raise SandboxError(f"{SANDBOX_ENV}={raw!r} is not one of {', '.join(MODES)}")
    return raw


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
            return "bubblewrap (bwrap) is not installed"
        return bwrap_works(self.bwrap)

    def prepare(
        self,
        argv: list[str],
        cwd: str | Path,
        env: Mapping[str, str],
        *,
        network: Network,
        writable: Iterable[str | Path] = (),
    ) -> Prepared:
        if self.mode == "off":
            return Prepared(list(argv), dict(env), None, ["sandbox off (VERANDA_SANDBOX=off)"])
        reason = self.unavailable()
        if reason is not None:
            if self.mode == "bwrap":
                raise SandboxError(f"{SANDBOX_ENV}=bwrap but the sandbox cannot start: {reason}")
            note = f"unsandboxed: {reason} (set {SANDBOX_ENV}=bwrap to require it)"
            log.warning(note)
            return Prepared(list(argv), dict(env), None, [note])
        policy = build_policy(list(argv), cwd, env, network=network, writable=writable)
        inner = {**env, "HOME": _home(policy, env), "TMPDIR": "/tmp"}
        assert self.bwrap is not None
        return Prepared(bwrap_argv(policy, list(argv), self.bwrap), inner, policy, policy.notes)


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
    "sandbox_mode",
]
