"""Where prepared environments live, and the key that lets the next ticket pay nothing.

An environment is a folder ``<cache>/<org>__<name>/<key>``; the key hashes what decides its
contents: the repository, the setup commands and where they came from, every lockfile the
repository has (``LOCKFILES``), the registries it may read and the image's Python. The same
lockfiles on the next ticket find the folder ready and run no setup at all; a changed lockfile
is a new key, so a stale environment is never reused. A failed setup is removed, never cached.

The cache root (``VERANDA_ENV_CACHE``) must lie outside the worker's state folders: it is bound
into sandboxes, and the sandbox refuses any bind holding worker state.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.core.errors import SetupError
from veranda_dagster.environment.registries import Registry

CACHE_ENV: Final = "VERANDA_ENV_CACHE"
KEY_FORMAT: Final = "veranda-env-1"
"""Bumped when the way environments are made changes, so old folders are not reused."""
LOCKFILES: Final = (
    "pyproject.toml", "setup.cfg", "setup.py", "requirements.txt", "requirements-dev.txt",
    "requirements-test.txt", "poetry.lock", "uv.lock", "Pipfile.lock", "pdm.lock",
    "package.json", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock",
    "bun.lock", "go.mod", "go.sum", "Cargo.toml", "Cargo.lock", "Gemfile.lock",
    "pom.xml", "build.gradle", "build.gradle.kts", "gradle.lockfile",
    ".veranda/setup.sh", ".openhands/setup.sh", ".devcontainer/devcontainer.json",
    ".devcontainer.json", ".tool-versions", ".python-version", ".nvmrc",
)  # fmt: skip
"""Files whose content decides what a setup installs (and the declarations themselves)."""
LOCK_WAIT_S: Final = 1_200.0
"""Waiting for another ticket preparing the same environment: its setup is bounded by
``setup.SETUP_TIMEOUT_S`` (900 s), so past this the holder is stuck."""
LOCK_POLL_S: Final = 0.25


def cache_root(environ: dict[str, str] | None = None) -> Path:
    """``$VERANDA_ENV_CACHE``, else a per-user folder under the system's temporary folder."""
    env = os.environ if environ is None else environ
    named = env.get(CACHE_ENV, "").strip()
    if named:
        return Path(named)
    return Path(tempfile.gettempdir()) / f"veranda-environments-{os.getuid()}"


def environment_key(
    repo: str,
    files: RepoFiles,
    commands: Sequence[str],
    source: str,
    registries: Sequence[Registry],
) -> str:
    digest = hashlib.sha256()

    def part(text: str | bytes) -> None:
        data = text.encode() if isinstance(text, str) else text
        digest.update(len(data).to_bytes(8, "big") + data)

    for text in (KEY_FORMAT, repo, source, platform.python_version(), *commands):
        part(text)
    for name in LOCKFILES:
        content = files.read_text(name)
        if content is not None:
            part(name)
            part(content)
    for registry in sorted(registries, key=lambda r: r.name):
        part(f"{registry.name}={registry.url}")
    return digest.hexdigest()[:32]


def environment_dir(root: Path, repo: str, key: str) -> Path:
    slug = repo.replace("/", "__") if repo else "repository"  # GitLab subgroups nest
    if not slug or slug.startswith(".") or "/" in slug or "\x00" in slug:
        raise SetupError(f"repository name {repo!r} cannot name an environment folder")
    return root / slug / key


@contextlib.contextmanager
def locked(folder: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold ``<folder>.lock``: one ticket prepares an environment, the others wait for it (at
    most ``wait_s``) and then find it ready."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    lock = folder.parent / f"{folder.name}.lock"
    deadline = time.monotonic() + wait_s
    with lock.open("a") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise SetupError(
                        f"another ticket has been preparing {folder.name} for over "
                        f"{wait_s:g}s; not waiting longer"
                    ) from None
                time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def discard(folder: Path) -> None:
    """A half-made or failed environment: removed so no ticket ever uses it."""
    shutil.rmtree(folder, ignore_errors=True)
