"""The real command runner and login step (the seams are in ``command``).

The real runner refuses known vendor binaries while ``VERANDA_NO_REAL_CLI=1`` (set by the
vendor tests' conftest), so a test that forgot to inject a runner fails loudly instead of
spending money.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

from veranda_dagster.domain.clone.active_environment import active_environment
from veranda_dagster.domain.clone.borrowed_objects import store_binds
from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.domain.core.process_group import kill_group
from veranda_dagster.domain.core.spend_meter import current_meter
from veranda_dagster.sandbox import Prepared, Sandbox
from veranda_dagster.sandbox.egress import Egress
from veranda_dagster.sandbox.metering import RequestMeter
from veranda_dagster.sandbox.proxied import EgressError, through_proxy
from veranda_dagster.vendors import registry
from veranda_dagster.vendors.capped_output import (
    MAX_CLI_OUTPUT_BYTES,
    OVER_NOTE,
    CappedPipe,
    feed,
)
from veranda_dagster.vendors.command import (
    EGRESS_REFUSED,
    EXIT_EGRESS_REFUSED,
    LoginStatus,
    RunOutput,
)
from veranda_dagster.vendors.isolation import TurnIsolation, turn_binds

NO_REAL_CLI_ENV = "VERANDA_NO_REAL_CLI"
KILLED_DRAIN_S: Final = 5.0
"""After the timeout's group kill, how long the CLI's pipes are still read. A killed group
closes them at once (the kernel delivers SIGKILL in milliseconds), but a process that left
the group (``setsid``: possible with the sandbox off) keeps them open for as long as it
lives; past this the turn ends with what was read and the pipes are closed on it."""


def vendor_binaries() -> frozenset[str]:
    """Basenames of vendor CLIs, as each vendor declares them (``default_binary`` and
    ``also_spawns``); the guard blocks these, not scripted stand-ins with other names."""
    return registry.binaries()


class RealCliBlockedError(VerandaError):
    """A real vendor CLI was about to be spawned while the no-real-CLI guard is on."""


def guard_real_cli(argv: Sequence[str]) -> None:
    """Raise if the guard is on and ``argv`` would start a vendor CLI."""
    if os.environ.get(NO_REAL_CLI_ENV) != "1" or not argv:
        return
    if Path(argv[0]).name in vendor_binaries():
        raise RealCliBlockedError(
            f"refusing to spawn vendor CLI {Path(argv[0]).name!r} while {NO_REAL_CLI_ENV}=1; "
            "inject a scripted CommandRunner"
        )


class SubprocessRunner:
    """Runs a command in its own process group and kills the whole group at the timeout.

    A vendor CLI spawns tools (shells, node workers); killing only the parent would leave them
    running, so the group goes. The CLI runs in the sandbox (``veranda_dagster.sandbox``): it
    sees its working directory (the clone, ``.git`` read-only) and the ``HOME`` its vendor
    chose, the toolchains, a private ``/proc``, and the environment the vendor built; it has
    no network of its own. With an ``egress`` (the vendor's upstream and key places) the key
    stays out: the turn's credential proxy holds it, and the CLI reaches the model only
    through the bridge to that proxy, with a placeholder (``sandbox.proxied``). A mode whose
    credential cannot go through the proxy is refused while the sandbox is on.
    The repository's own agent configuration named by ``isolation`` is masked for the turn and
    the product's own is shown read-only in its place (``vendors.isolation``). The environment
    the repository's setup step prepared is shown read-only, its tools first on ``PATH``, so the
    agent runs the repository's tests with the same tools as the product's own validation.
    """

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox

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
    ) -> RunOutput:
        guard_real_cli(argv)
        missing = _unrunnable(argv, env)
        if missing is not None:
            return missing
        if cwd is None:  # never the worker's own directory: an empty one of its own
            with tempfile.TemporaryDirectory(prefix="veranda-cli-") as scratch:
                return self._run(argv, scratch, env, stdin, timeout, egress, isolation)
        return self._run(argv, cwd, env, stdin, timeout, egress, isolation)

    def _run(
        self,
        argv: Sequence[str],
        cwd: str,
        env: Mapping[str, str],
        stdin: str | None,
        timeout: float,
        egress: Egress | None,
        isolation: TurnIsolation | None,
    ) -> RunOutput:
        """One turn in the sandbox: the repository's agent configuration masked and the
        product's shown (``turn_binds``), the model reached through the turn's proxy."""
        started = time.monotonic()
        home = env.get("HOME", "")
        writable = [home] if home and Path(home).is_dir() and _own_home(home) else []
        sandbox = self.sandbox or Sandbox()
        try:
            with (
                turn_binds(cwd, isolation) as shown,
                _proxied(sandbox, egress, argv, env) as (launcher, inner_argv, inner_env, binds),
            ):
                active = active_environment(cwd)
                if active is not None:  # the repository's tools, as its commands get them
                    inner_env, binds = active.apply(inner_env), {**binds, **active.binds}
                binds = {**store_binds(cwd), **binds}  # the clone's borrowed objects, read-only
                prepared = sandbox.prepare(
                    inner_argv, cwd, inner_env, network="none", writable=writable,
                    hidden=shown.hidden, ro_binds={**shown.ro_binds, **binds}, launcher=launcher,
                )  # fmt: skip
                return _spawn(prepared, cwd, stdin, timeout, started)
        except EgressError as exc:
            return RunOutput(exit_code=EXIT_EGRESS_REFUSED, stderr=f"{EGRESS_REFUSED}: {exc}")


@contextlib.contextmanager
def _proxied(
    sandbox: Sandbox, egress: Egress | None, argv: Sequence[str], env: Mapping[str, str]
) -> Iterator[tuple[list[str], list[str], dict[str, str], dict[str, str]]]:
    """(launcher, argv, env, read-only binds) for the sandbox: through the turn's credential
    proxy when the vendor declared an egress and the sandbox is on, else as given (a command
    that needs no model, or ``VERANDA_SANDBOX=off``, which exposes everything knowingly)."""
    if egress is None or sandbox.mode == "off":
        yield [], list(argv), dict(env), {}
        return
    with through_proxy(egress, argv, env, meter=_turn_meter()) as command:
        yield command.launcher, command.argv, command.env, command.ro_binds


def _turn_meter() -> RequestMeter | None:
    """The proxy's meter when a budget watches this turn (``domain.core.spend_meter``): every
    request the sandbox makes to the vendor is admitted against the caps and charged."""
    from veranda_dagster.vendors.wire_meter import WireMeter  # it imports the vendors

    meter = current_meter()
    return WireMeter(meter) if meter is not None else None


def _spawn(
    prepared: Prepared, cwd: str, stdin: str | None, timeout: float, started: float
) -> RunOutput:
    try:
        proc = subprocess.Popen(
            prepared.argv,
            cwd=cwd,
            env=prepared.env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        return RunOutput(exit_code=127, stderr=f"binary not found: {exc.filename}")
    except PermissionError as exc:
        return RunOutput(exit_code=126, stderr=f"binary not executable: {exc.filename}")
    assert proc.stdout is not None and proc.stderr is not None
    pipes = [
        CappedPipe(proc.stdout, MAX_CLI_OUTPUT_BYTES, lambda: kill_group(proc)),
        CappedPipe(proc.stderr, MAX_CLI_OUTPUT_BYTES, lambda: kill_group(proc)),
    ]
    feed(proc, stdin)
    deadline = time.monotonic() + timeout
    try:  # the CLI's end, then its pipes' end (a child of its may still hold them), in time
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        timed_out = not all(p.join(max(0.0, deadline - time.monotonic())) for p in pipes)
    except subprocess.TimeoutExpired:
        timed_out = True
    if timed_out:
        kill_group(proc)
    held = _drain_killed(proc, pipes) if timed_out or any(p.over for p in pipes) else False
    over = any(p.over for p in pipes)
    stderr = pipes[1].text()
    if over:
        stderr += "\n" + OVER_NOTE.format(limit=MAX_CLI_OUTPUT_BYTES)
    if held:
        stderr += "\n[output pipes held past the kill]"
    return RunOutput(
        exit_code=None if timed_out or over else proc.returncode,
        stdout=pipes[0].text(),
        stderr=stderr,
        timed_out=timed_out,
        duration_s=round(time.monotonic() - started, 3),
    )


def _unrunnable(argv: Sequence[str], env: Mapping[str, str]) -> RunOutput | None:
    """A missing or non-executable binary, reported the way a shell would (127/126) before the
    sandbox is built around it, so health classification sees the same verdict either way."""
    if not argv:
        return RunOutput(exit_code=127, stderr="binary not found: (empty argv)")
    if shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:
        if os.path.exists(argv[0]) and not os.access(argv[0], os.X_OK):
            return RunOutput(exit_code=126, stderr=f"binary not executable: {argv[0]}")
        return RunOutput(exit_code=127, stderr=f"binary not found: {argv[0]}")
    return None


def _own_home(home: str) -> bool:
    """A ``HOME`` the vendor chose for the CLI (a per-vendor throwaway home) is the CLI's to
    write; the worker's own home is never visible in the sandbox."""
    return os.path.realpath(home) != os.path.realpath(Path.home())


def _drain_killed(proc: subprocess.Popen[bytes], pipes: list[CappedPipe]) -> bool:
    """After the group's kill: the pipes read to their end for at most ``KILLED_DRAIN_S``;
    past it (an escaped process holds them) they are abandoned to it. Whether they were held."""
    drain_end = time.monotonic() + KILLED_DRAIN_S
    held = not all(p.join(max(0.0, drain_end - time.monotonic())) for p in pipes)
    if held:
        for pipe in pipes:
            pipe.abandon()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILLED_DRAIN_S)  # the leader itself was killed: only reaping is left
    return held


class CredentialFileLogin:
    """The real step: a login mode is usable when the CLI's stored session exists.

    It never runs an interactive login (a service has no browser); it only reports, so the
    probe can classify a missing session as ``auth`` without spawning anything.
    """

    def ensure(self, vendor: str, mode: str, credential_paths: Sequence[str]) -> LoginStatus:
        for raw in credential_paths:
            path = Path(os.path.expandvars(os.path.expanduser(raw)))
            if path.is_file() and path.stat().st_size > 0:
                return LoginStatus(ok=True, detail=f"session at {path}")
            if path.is_dir() and any(path.iterdir()):
                return LoginStatus(ok=True, detail=f"session in {path}")
        wanted = ", ".join(credential_paths) or "(none known)"
        return LoginStatus(ok=False, detail=f"{vendor}/{mode}: no stored login session ({wanted})")
