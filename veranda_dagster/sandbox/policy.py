"""What one sandboxed command may see: an allowlist of paths, an exact environment, a network.

The product runs code it did not write by design: the repository's own build and tests, and a
coding agent steered by a ticket anyone can write. Both run as the worker's user, so the only
thing that keeps the worker's secrets (forge and tracker tokens, other vendors' keys, the value
store, other tickets' clones, the Vault files) away from them is what their filesystem, process
table and environment *contain*. A policy is therefore an allowlist, never a denylist: the
system directories and toolchains read-only, the clone read-write with its ``.git`` read-only
(so planted hooks, fsmonitor commands and a rewritten push URL cannot reach the product's own
git calls), a private ``/proc`` and ``/tmp``, and nothing else.

``forbidden`` paths are the ones that must never become visible even as a parent of an
allowed one: a toolchain under ``$DAGSTER_HOME`` or a ``PATH`` entry of ``/`` is dropped with a
note instead of exposing everything beneath it.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, Field

from veranda_dagster.errors import ConfigError

Network = Literal["none"]
"""Every sandbox gets its own network namespace with only loopback: a repository command has
no network at all, an agent reaches its model only through the credential proxy's socket
(``proxied.py``). The host's network (its loopback services, its abstract unix sockets) is
never shared; the parameter stays so a caller says so where it builds a command."""


class SandboxError(ConfigError):
    """A sandbox cannot be built as asked (a forbidden path, no working bubblewrap)."""


SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Read-only everywhere: binaries, shared libraries, interpreters installed by the image.
``/opt`` is not among them: images keep state there (a ``DAGSTER_HOME`` under ``/opt`` put
every ticket's values, ledgers and run databases in every sandbox); a toolchain under ``/opt``
is bound through its ``PATH`` entry like any other."""

ETC_ENTRIES = (
    "passwd", "group", "hosts", "host.conf", "nsswitch.conf", "resolv.conf", "localtime",
    "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl",
    "ca-certificates", "ca-certificates.conf", "pki", "mime.types", "protocols", "services",
    "os-release", "debian_version", "fonts",
    "chromium", "chromium.d", "profile", "bash.bashrc", "environment", "login.defs", "shells",
    "inputrc", "magic", "mailcap", "java-17-openjdk", "python3", "python3.11", "locale.alias",
)  # fmt: skip
"""``/etc`` entries tools need to start (users, DNS, certificates, the dynamic linker); shadow
files, sudoers, machine credentials and service configs are not among them, and neither are
the package managers' and git's system files (``gitconfig``, ``npmrc``, ``pip.conf``,
``xdg``), which is where a machine keeps registry tokens and credential helpers."""

SANDBOX_HOME = "/home/sandbox"
SANDBOX_UID = 65534
"""``nobody``: the sandboxed process is an unprivileged user inside its own user namespace."""


def default_forbidden(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Paths that hold the worker's state and secrets, from its own configuration."""
    env = os.environ if environ is None else environ
    names = (
        "DAGSTER_HOME",
        "VERANDA_VALUES_DIR",
        "VERANDA_WORKSPACES",
        "VERANDA_VENDORS_FILE",
        "VERANDA_BACKENDS_FILE",  # rename31: keep (its former name, still read)
    )
    found = [Path(env[name]) for name in names if env.get(name)]
    home = env.get("HOME")
    if home:
        found.append(Path(home))
    return [*found, Path("/vault"), Path("/root"), Path("/var/run/secrets"), Path("/proc")]


class SandboxPolicy(BaseModel):
    """One command's view of the machine."""

    model_config = ConfigDict(frozen=True)

    cwd: str
    writable: list[str] = Field(default_factory=list)
    """Read-write binds (the clone, a throwaway home). Their ``.git`` stays read-only."""
    readable: list[str] = Field(default_factory=list)
    """Read-only binds beyond the system directories (toolchains, the CLI's install tree)."""
    network: Network = "none"
    home: str = SANDBOX_HOME
    """``$HOME`` inside; a private tmpfs unless a writable bind provides it."""
    notes: list[str] = Field(default_factory=list)
    """Paths left out because they would have exposed a forbidden one."""
    hidden: list[str] = Field(default_factory=list)
    """Paths inside a writable bind shown empty and read-only (a repository's own agent
    settings, hooks and MCP servers, which must not take effect for the product's turn)."""
    protect_git: bool = True
    """Keep each writable bind's ``.git`` read-only; off only for the product's own sandboxed
    git, which has no credential and no network."""
    ro_binds: dict[str, str] = Field(default_factory=dict)
    """Host path -> path inside, read-only (the credential proxy's socket folder)."""


def _contains(parent: Path, child: Path) -> bool:
    return parent == child or parent in child.parents


def _under_system_dir(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS)


def _usable(path: Path, forbidden: Iterable[Path]) -> bool:
    """A bind is allowed unless it is, or contains, a forbidden path (a toolchain *under* the
    worker's home, such as ``~/.pyenv``, is fine; the home itself is not)."""
    return not any(_contains(path, f) for f in forbidden)


def toolchain_paths(argv0: str, env: Mapping[str, str]) -> list[Path]:
    """Read-only roots a command needs to start: each ``PATH`` entry (and where its links
    point), version-manager roots (pyenv shims need ``$PYENV_ROOT``), this interpreter's
    prefixes (the stand-in agent and repo tests run Python), ``PYTHONPATH`` entries and the
    product package (the stand-in imports it), and a CLI's install tree (its ``node_modules``
    and the directory holding it)."""
    roots: list[Path] = []
    entries = env.get("PATH", "").split(os.pathsep) + env.get("PYTHONPATH", "").split(os.pathsep)
    for entry in entries:
        if entry and os.path.isdir(entry):
            roots += [Path(entry), Path(os.path.realpath(entry))]
            if entry.rstrip("/").endswith("/shims"):
                roots.append(Path(entry).parent)
    roots += [Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable))]
    roots += product_packages()
    if os.path.isabs(argv0):
        for binary in dict.fromkeys([Path(argv0), Path(os.path.realpath(argv0))]):
            roots.append(binary)
            parts = binary.parts
            if "node_modules" in parts:
                roots.append(Path(*parts[: parts.index("node_modules") + 1]))
    return roots


def product_packages() -> list[Path]:
    """This ``veranda_dagster`` package, and the one an editable install points at (PEP 610's
    ``direct_url.json``): a console script such as ``veranda-sim-agent`` imports through the
    install, which may differ from the code this process runs (a checkout on ``PYTHONPATH``)."""
    found = [Path(__file__).resolve().parents[1]]
    try:
        raw = importlib.metadata.distribution("veranda_dagster").read_text("direct_url.json")
        url = json.loads(raw or "{}").get("url", "")
    except (importlib.metadata.PackageNotFoundError, ValueError, AttributeError):
        url = ""
    if url.startswith("file://"):
        installed = Path(unquote(url[len("file://") :])) / "veranda_dagster"
        if installed.is_dir():
            found.append(installed.resolve())
    return found


READONLY_ENV = "VERANDA_SANDBOX_READONLY"
"""Extra read-only roots (``os.pathsep``-separated) for tools installed outside ``PATH`` and the
system folders, such as a CLI's wrapper that execs a ``node`` kept elsewhere."""


def outermost(paths: list[str]) -> list[str]:
    """``paths`` without those inside another one: the outer bind already shows them, and a
    second bind of a link inside it (``.veranda/bin/grok`` -> ``../pip/...``) would make
    bubblewrap create a file through a link whose target is not bound yet."""
    kept: list[str] = []
    for path in sorted(dict.fromkeys(paths), key=lambda p: len(Path(p).parts)):
        if not any(_contains(Path(k), Path(path)) for k in kept):
            kept.append(path)
    return kept


def build_policy(
    argv: list[str],
    cwd: str | Path,
    env: Mapping[str, str],
    *,
    network: Network,
    writable: Iterable[str | Path] = (),
    forbidden: Iterable[Path] | None = None,
    hidden: Iterable[str | Path] = (),
    protect_git: bool = True,
    ro_binds: Mapping[str, str] | None = None,
) -> SandboxPolicy:
    """The policy for ``argv`` run in ``cwd`` (always writable) with exactly ``env``."""
    banned = [Path(os.path.realpath(p)) for p in (forbidden or default_forbidden())]
    rw: list[str] = []
    notes: list[str] = []
    for raw in [cwd, *writable]:
        path = Path(os.path.realpath(raw))
        if not _usable(path, banned):
            raise SandboxError(
                f"refusing to make {path} writable in a sandbox: it holds worker state"
            )
        if str(path) not in rw:
            rw.append(str(path))
    readable: list[str] = []
    extra = [Path(p) for p in os.environ.get(READONLY_ENV, "").split(os.pathsep) if p]
    for root in [*toolchain_paths(argv[0] if argv else "", env), *extra]:
        real = Path(os.path.realpath(root))
        if not real.exists() or any(_contains(Path(w), real) for w in rw):
            continue
        if not _usable(real, banned) or not _usable(root, banned):
            notes.append(f"not visible: {root} (holds worker state)")
            continue
        for shown in dict.fromkeys([str(real), str(root)]):  # where it is, and how it is named
            if shown not in readable and not _under_system_dir(shown):
                readable.append(shown)
    masked: list[str] = []
    for raw in hidden:
        path = Path(os.path.abspath(raw))
        if not any(_contains(Path(w), path) for w in rw):
            raise SandboxError(f"can only hide a path inside a writable bind, not {path}")
        # A link is hidden where it leads: bubblewrap mounts through a link, and a link that
        # leaves the clone leads to nothing the sandbox shows.
        real = Path(os.path.realpath(path))
        inside = any(_contains(Path(w), real) for w in rw)
        if inside and os.path.exists(real) and str(real) not in masked:
            masked.append(str(real))
    for source in ro_binds or {}:
        if not _usable(Path(os.path.realpath(source)), banned):
            raise SandboxError(f"refusing to bind {source} into a sandbox: it holds worker state")
    return SandboxPolicy(
        cwd=str(Path(os.path.realpath(cwd))),
        writable=rw,
        readable=outermost(readable),
        network=network,
        notes=notes,
        hidden=masked,
        protect_git=protect_git,
        ro_binds=dict(ro_binds or {}),
    )
