"""The setup step: prepare a repository's environment in the sandbox, once per lockfile hash.

``prepare_environment`` runs before the red tests (``domain/work/turn.prepare``), and again,
for nothing, in every later phase:

1. The declaration (``RepoFacts.setup``: the repository's setup script, a devcontainer's create
   commands, the org hints' ``setup:`` line) or the language default (``defaults.py``, only when
   a package registry is configured to install from); with neither, an outcome ``none`` saying
   what is missing, and the commands run with the image's tools.
2. The key (``cache.py``). A ready folder under it is the answer: ``cached``, no time spent.
3. Otherwise, holding the key's lock, the commands run in the sandbox: the clone as the working
   folder, the environment folder writable (``$VERANDA_ENV``), no network but the registry
   proxy's (read-only, configured registries only, private credentials added outside), bounded
   by ``SETUP_TIMEOUT_S`` and ``MAX_ENV_BYTES`` (checked every ``SIZE_POLL_S`` while it runs).
   A failure, a timeout or an oversized folder removes the folder and raises ``SetupError``;
   success writes the ready marker last.
4. A pointer beside the clone (``active.py``) tells every later command which folder to show.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from veranda_dagster.domain.clone.active_environment import (
    ENV_VAR,
    ActiveEnvironment,
    write_pointer,
)
from veranda_dagster.domain.clone.borrowed_objects import store_binds
from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.core.errors import SetupError
from veranda_dagster.domain.core.models import RepoFacts, SetupOutcome
from veranda_dagster.domain.core.process_group import end_group
from veranda_dagster.domain.work.validation import _Tail, scrubbed_env
from veranda_dagster.environment.cache import (
    cache_root,
    discard,
    environment_dir,
    environment_key,
    locked,
)
from veranda_dagster.environment.defaults import python_default
from veranda_dagster.environment.ready_record import read_ready, write_ready
from veranda_dagster.environment.registries import Registry, load_registries
from veranda_dagster.environment.registry_proxy import SOCKET_NAME, RegistryProxy
from veranda_dagster.sandbox import Sandbox, bridge
from veranda_dagster.sandbox.proxied import BRIDGE_PORTS, SOCKET_DIR_INSIDE

SETUP_TIMEOUT_S: Final = 900.0
"""One repository's whole setup: a cold install of a large Python or Node project takes a few
minutes; fifteen means it hangs (or mines)."""
MAX_ENV_BYTES: Final = 4 * 1024**3
"""One environment folder: a data-science venv is 2-3 GB; more is not a test environment."""
MAX_ENV_ENTRIES: Final = 400_000
"""Files and folders in one environment (node_modules of a large monorepo is ~150k)."""
SIZE_POLL_S: Final = 2.0
"""How often the running setup's folder is measured against ``MAX_ENV_BYTES``."""
SETUP_TAIL_BYTES: Final = 8_000
NO_PROXY: Final = "127.0.0.1,localhost"


NOT_DECLARED: Final = (
    "no setup declared (.veranda/setup.sh, .devcontainer/devcontainer.json or the org hints' "
    "setup: line)"
)


def _declared(
    facts: RepoFacts, files: RepoFiles, registries: Sequence[Registry]
) -> tuple[list[str], str, str]:
    """(commands, source, what is missing when there are none)."""
    if facts.setup:
        return list(facts.setup), facts.setup_source, ""
    if "python" not in facts.languages:
        languages = ", ".join(facts.languages) or "no language recognised"
        why = f"no default for {languages}"
    elif any(r.kind == "pypi" for r in registries):
        return python_default(files), "default: python", ""
    else:
        why = "no pypi registry configured (VERANDA_REGISTRIES) for the Python default"
    return [], "", f"{NOT_DECLARED} and {why}; commands run with the image's tools"


def prepare_environment(
    repo: str,
    repo_dir: str | Path,
    facts: RepoFacts,
    *,
    environ: dict[str, str] | None = None,
    timeout_s: float = SETUP_TIMEOUT_S,
    max_bytes: int = MAX_ENV_BYTES,
) -> SetupOutcome:
    """Prepare (or find) ``repo``'s environment for the clone at ``repo_dir``."""
    env = dict(os.environ if environ is None else environ)
    registries = load_registries(env)
    files = RepoFiles(repo_dir)
    commands, source, missing = _declared(facts, files, registries)
    if not commands:
        outcome = SetupOutcome(status="none", missing=missing)
        write_pointer(repo_dir, outcome)
        return outcome
    key = environment_key(repo, files, commands, source, registries)
    folder = environment_dir(cache_root(env), repo, key)
    base = SetupOutcome(
        status="cached", source=source, commands=commands, key=key, env_dir=str(folder)
    )
    ready = read_ready(folder)
    if ready is None:
        with locked(folder):
            ready = read_ready(folder)
            if ready is None:  # nobody made it while we waited
                base = _run(base, Path(repo_dir), folder, registries, timeout_s, max_bytes)
    if ready is not None:
        base = base.model_copy(update={"size_bytes": ready.size_bytes})
    write_pointer(repo_dir, base)
    return base


def _run(
    base: SetupOutcome,
    repo_dir: Path,
    folder: Path,
    registries: Sequence[Registry],
    timeout_s: float,
    max_bytes: int,
) -> SetupOutcome:
    discard(folder)  # a half-made folder of a killed worker
    folder.mkdir(parents=True)
    started = time.monotonic()
    script = "set -e\n" + "\n".join(base.commands) + "\n"
    try:
        with _sandboxed(script, repo_dir, folder, registries) as (argv, env, proxy):
            code, why, tail = _wait(argv, env, repo_dir, folder, timeout_s, max_bytes)
            refused = list(proxy.refused)
            if proxy.refusals > len(refused):
                refused.append(f"... and {proxy.refusals - len(refused)} more refusals")
    except BaseException:
        discard(folder)
        raise
    size, _ = tree_size(folder, MAX_ENV_ENTRIES)
    outcome = base.model_copy(
        update={
            "status": "ready",
            "duration_s": round(time.monotonic() - started, 3),
            "size_bytes": size,
            "output_tail": tail,
            "refused": refused,
        }
    )
    if why is None and code != 0:
        why = f"exited {code}"
    if why is not None:
        discard(folder)
        shown = "; ".join(refused[:5])
        raise SetupError(
            f"setup of {base.source} {why}"
            + (f"; the registry proxy refused: {shown}" if shown else "")
            + f"\n{tail[-2000:]}"
        )
    write_ready(folder, outcome)
    return outcome


@contextlib.contextmanager
def _sandboxed(
    script: str, repo_dir: Path, folder: Path, registries: Sequence[Registry]
) -> Iterator[tuple[list[str], dict[str, str], RegistryProxy]]:
    port = BRIDGE_PORTS[secrets.randbelow(len(BRIDGE_PORTS))]
    local = f"http://127.0.0.1:{port}"
    with RegistryProxy(registries, local) as proxy:
        inner = ActiveEnvironment(str(folder), SetupOutcome(status="ready")).apply(scrubbed_env())
        inner.update(_tool_config(proxy, registries, local))
        inner[ENV_VAR] = str(folder)
        sandbox = Sandbox()
        # VERANDA_SANDBOX=off (a debugging switch) runs the bridge on the host, at the real socket
        inside = str(proxy.socket_path) if sandbox.mode == "off" else SOCKET_DIR_INSIDE
        launcher = [
            sys.executable, "-I", str(Path(bridge.__file__).resolve()),
            "--socket", f"{inside}/{SOCKET_NAME}" if sandbox.mode != "off" else inside,
            "--port", str(port), "--",
        ]  # fmt: skip
        prepared = sandbox.prepare(
            ["/bin/sh", "-c", script],
            repo_dir,
            inner,
            network="none",
            writable=[folder],
            ro_binds={**store_binds(repo_dir), str(proxy.folder): SOCKET_DIR_INSIDE},
            launcher=launcher,
        )
        argv = prepared.argv if prepared.sandboxed else [*launcher, *prepared.argv]
        yield argv, prepared.env, proxy


def _tool_config(
    proxy: RegistryProxy, registries: Sequence[Registry], local: str
) -> dict[str, str]:
    """Point each tool at its registry's loopback mount; anything else goes through
    ``http_proxy`` (and is refused unless it is under a configured registry)."""
    out = {
        "http_proxy": local, "HTTP_PROXY": local, "no_proxy": NO_PROXY, "NO_PROXY": NO_PROXY,
        "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
        "PIP_RETRIES": "1",
        "npm_config_update_notifier": "false", "npm_config_fund": "false",
        "npm_config_audit": "false",
    }  # fmt: skip
    for registry in registries:
        mount = proxy.mount(registry)
        if registry.kind == "pypi":
            out.setdefault("PIP_INDEX_URL", mount + "/")
        elif registry.kind == "npm":
            out.setdefault("npm_config_registry", mount + "/")
        elif registry.kind == "go":
            out.setdefault("GOPROXY", mount)
    return out


def _wait(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    folder: Path,
    timeout_s: float,
    max_bytes: int,
) -> tuple[int | None, str | None, str]:
    """Run to the end or a bound: (exit code, why it was stopped, output tail)."""
    proc = subprocess.Popen(
        argv,
        cwd=str(cwd),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    tail = _Tail(proc.stdout, SETUP_TAIL_BYTES)
    deadline = time.monotonic() + timeout_s
    why: str | None = None
    while why is None:
        left = deadline - time.monotonic()
        try:
            proc.wait(timeout=max(0.0, min(SIZE_POLL_S, left)))
            break
        except subprocess.TimeoutExpired:
            pass
        size, entries = tree_size(folder, MAX_ENV_ENTRIES)
        if size > max_bytes or entries >= MAX_ENV_ENTRIES:
            why = f"outgrew its bound ({size} bytes, {entries} entries; max {max_bytes} bytes)"
        elif time.monotonic() >= deadline:
            why = f"timed out after {timeout_s:g}s"
    if why is not None:
        end_group(proc)
    return proc.returncode, why, tail.text()


def tree_size(folder: Path, max_entries: int) -> tuple[int, int]:
    """Bytes and entries under ``folder`` (links not followed), counting at most
    ``max_entries`` entries."""
    total, entries = 0, 0
    stack = [folder]
    while stack and entries < max_entries:
        current = stack.pop()
        try:
            with os.scandir(current) as items:
                for item in items:
                    entries += 1
                    with contextlib.suppress(OSError):
                        info = item.stat(follow_symlinks=False)
                        total += info.st_size
                        if item.is_dir(follow_symlinks=False):
                            stack.append(Path(item.path))
                    if entries >= max_entries:
                        break
        except OSError:
            continue
    return total, entries
