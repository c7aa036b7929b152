"""Run the repository's own build, lint and test commands, each bounded in time and output.

A command runs through the shell in its own process group, so a hung ``make test`` is killed
with every child it spawned (not just the shell) at its bound and reported ``timed_out``. Output
is kept as a tail bounded in bytes, read while the command runs so a chatty build never fills
memory. The environment is an allowlist: the provider keys and forge token this service holds
must not reach a repository's test suite, which is code we did not write. And the command runs
in the sandbox (``veranda_dagster.sandbox``): it sees the clone (its ``.git`` read-only), the
toolchains and a private ``/proc``, never the worker's files or processes, and no network. The
environment the repository's setup step prepared (``veranda_dagster.environment``) is shown
read-only with its tools first on ``PATH``.
"""

from __future__ import annotations

import io
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from veranda_dagster.domain.clone.active_environment import active_environment
from veranda_dagster.domain.clone.borrowed_objects import store_binds
from veranda_dagster.domain.core.bounds import OUTPUT_TAIL_BYTES, VALIDATION_TIMEOUT_S
from veranda_dagster.domain.core.models import CommandResult, RepoFacts
from veranda_dagster.domain.core.process_group import REAP_S, end_group
from veranda_dagster.sandbox import Sandbox

ENV_ALLOWLIST = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ",
    "TMPDIR", "PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "CONDA_PREFIX", "GOPATH", "GOROOT",
    "GOCACHE", "GOMODCACHE", "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME", "NVM_DIR", "NODE_PATH",
    "JAVA_HOME", "DOCKER_HOST", "CI", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
)  # fmt: skip
"""Variables a toolchain needs to find itself (or an operator set to tune it, like pytest's);
everything else (keys, tokens) is dropped."""

FIXED_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "GIT_TERMINAL_PROMPT": "0", "NO_COLOR": "1"}
_READ_CHUNK = 65_536


def scrubbed_env(base: dict[str, str] | None = None) -> dict[str, str]:
    source = os.environ if base is None else base
    env = {k: source[k] for k in ENV_ALLOWLIST if k in source}
    return {**env, **FIXED_ENV}


class _Tail:
    """The last ``limit`` bytes of a stream, read on a thread."""

    def __init__(self, stream: IO[bytes] | None, limit: int) -> None:
        self._buf = bytearray()
        self._limit = limit
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: io.BufferedReader) -> None:
        """Read to end of stream, then close it: the reader owns the pipe, so it is never left
        open for the collector (a pipe a killed command's escaped child still holds stays
        open until that child lets go, as before)."""
        with stream:
            for chunk in iter(lambda: stream.read1(_READ_CHUNK), b""):
                self._buf += chunk
                if len(self._buf) > self._limit:
                    del self._buf[: len(self._buf) - self._limit]

    def text(self) -> str:
        self._thread.join(REAP_S)
        data = bytes(self._buf[-self._limit :]) if self._limit else b""
        while data and 0x80 <= data[0] <= 0xBF:  # a cut multi-byte character
            data = data[1:]
        return data.decode("utf-8", errors="replace")


def run_command(
    cmd: str,
    cwd: str | Path,
    timeout_s: float = VALIDATION_TIMEOUT_S,
    tail_bytes: int = OUTPUT_TAIL_BYTES,
) -> CommandResult:
    """Run ``cmd`` with ``sh -c`` in ``cwd``, sandboxed with no network (a repository's own
    code never reaches the host's network, its loopback services or its abstract sockets);
    kill its whole process group (and so the sandbox with everything in it) at ``timeout_s``."""
    started = time.monotonic()
    env, binds = scrubbed_env(), store_binds(cwd)  # the clone's borrowed objects, read-only
    active = active_environment(cwd)
    if active is not None:  # the repository's own tools, from its setup step
        env, binds = active.apply(env), {**binds, **active.binds}
    prepared = Sandbox().prepare(["/bin/sh", "-c", cmd], cwd, env, network="none", ro_binds=binds)
    proc = subprocess.Popen(
        prepared.argv,
        cwd=str(cwd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=prepared.env,
        start_new_session=True,
    )
    tail = _Tail(proc.stdout, tail_bytes)
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        end_group(proc)
    output = tail.text()
    if timed_out:
        note = f"\n[veranda: killed after {timeout_s:g}s bound]"
        output = (output + note)[-tail_bytes:] if tail_bytes else ""
    return CommandResult(
        command=cmd,
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        duration_s=round(time.monotonic() - started, 3),
        output_tail=output,
        sandboxed=prepared.sandboxed,
    )


def validation_commands(facts: RepoFacts) -> list[str]:
    """Build, then lint, then test: the order a maintainer would run them."""
    return list(dict.fromkeys([*facts.build, *facts.lint, *facts.test]))


def run_validation(
    facts: RepoFacts, cwd: str | Path, timeout_s: float = VALIDATION_TIMEOUT_S
) -> list[CommandResult]:
    """Every validation command, each with its own bound; all run, so one failing lint does
    not hide a failing test from the implementer's next attempt."""
    return [run_command(cmd, cwd, timeout_s) for cmd in validation_commands(facts)]


def failure_report(results: list[CommandResult], limit: int = OUTPUT_TAIL_BYTES) -> str:
    """The failing commands and their output tails, for the next prompt."""
    parts = []
    for r in results:
        if r.ok:
            continue
        status = "timed out" if r.timed_out else f"exit {r.exit_code}"
        parts.append(f"$ {r.command}  ({status})\n{r.output_tail[-limit:]}")
    return "\n\n".join(parts)
