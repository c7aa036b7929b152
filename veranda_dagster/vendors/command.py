"""The command-runner and login-step seams every vendor is built on.

An vendor never calls ``subprocess`` itself: it hands an argv, a working directory and an
explicit environment to a ``CommandRunner``. Tests inject a scripted runner and so exercise the
real argv building, env assembly, stream parsing and classification without spawning a vendor
CLI; the real one is ``runner.SubprocessRunner``. Kept apart from it because the real runner's
guard reads the vendor registry, which knows the vendors, which are built on these seams.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from veranda_dagster.sandbox.egress import Egress
from veranda_dagster.vendors.isolation import TurnIsolation

EGRESS_REFUSED = "veranda egress refused"
"""Starts the stderr of a turn refused because its credential cannot go through the proxy
(``health`` classifies it ``auth``, so the resolver moves to the next vendor)."""
EXIT_EGRESS_REFUSED = 77
"""EX_NOPERM: the turn never started."""


class RunOutput(BaseModel):
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    duration_s: float = 0.0


@runtime_checkable
class CommandRunner(Protocol):
    def run(
        self,
        argv: Sequence[str],
        cwd: str | None,
        env: Mapping[str, str],
        stdin: str | None,
        timeout: float,
        *,
        egress: Egress | None = None,
        isolation: TurnIsolation | None = None,
    ) -> RunOutput: ...


class LoginStatus(BaseModel):
    ok: bool
    detail: str = ""


@runtime_checkable
class LoginStep(Protocol):
    """Whether a login/OAuth mode has a usable session, without an interactive login.

    ``credential_paths`` are where the vendor CLI keeps its session (the vendor knows them).
    Tests inject a scripted step to simulate a logged-in, logged-out or expired seat.
    """

    def ensure(self, vendor: str, mode: str, credential_paths: Sequence[str]) -> LoginStatus: ...
