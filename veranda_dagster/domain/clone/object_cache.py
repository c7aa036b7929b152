"""One object store per repository, shared by its tickets' clones: a new clone costs seconds.

Every ticket used to make a full-history clone of its repository over the network (376 MB and
minutes for a sympy-sized one). Now the worker keeps one bare store per repository under
``<workspaces>/_objects/``, fetched from the forge before each new clone (only what changed
since the last ticket), and a ticket's clone is copied from that store on the local disk,
after which the clone's ``origin`` is the forge again (``harden_git_dir`` rewrites its config)
and ``Workspace.ensure`` fetches from the forge as before. The store is on disk, so it
survives a worker restart; a store that is not whole (a killed first clone) is made again.

Why a copy (``--no-hardlinks``) and not ``objects/info/alternates``: the product's own git
runs in the sandbox (``git_command.run_git``), which sees the clone and nothing else of the
workspaces, so an alternate store would be invisible to every sandboxed command that reads
objects; and ``git_transport`` deliberately deletes alternates files, which sandboxed code
could point at another ticket's objects. Hard links would share the pack files' inodes with
code that may write ``.git``. The copy keeps each clone self-contained; disk is bounded by
eviction (``workspace_eviction``), not by sharing.

The store is touched only by the product's transport git, outside the sandbox, with the
product's own config (``harden_bare_store``) and under a lock per store, so two tickets of one
repository starting together fetch it once each in turn and never see it half-written.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from veranda_dagster.domain.clone.git_command import GitError, git_askpass, token_allowed
from veranda_dagster.domain.clone.git_transport import (
    harden_bare_store,
    transport_config,
    transport_env,
)

OBJECTS_DIR = "_objects"
"""The stores' folder under the workspaces root (not a ticket key: keys start with a letter
or digit, never ``_``)."""

STORE_GIT_TIMEOUT_S = 600.0
"""A first full clone of a large repository into the store; anything slower is a hung network."""

STORE_LOCK_TIMEOUT_S = 900.0
"""How long a clone waits for another ticket's refresh of the same store (one full clone)."""

STORE_LOCK_POLL_S = 0.2
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class ObjectStoreError(GitError):
    """The repository's shared store could not be made or refreshed; the message names it."""


class ObjectCache:
    """The per-repository bare stores under ``root`` (``<workspaces>/_objects``)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def store_for(self, clone_url: str) -> Path:
        """``root/<readable tail>-<digest>.git``: one per clone URL, never outside ``root``."""
        tail = _NAME.sub("_", clone_url.rstrip("/").rsplit("/", 2)[-2:][-1])[:40] or "repo"
        digest = hashlib.sha256(clone_url.encode()).hexdigest()[:16]
        return self.root / f"{tail.removesuffix('.git')}-{digest}.git"

    def refresh(self, clone_url: str, token: str = "", git_username: str = "") -> Path:
        """The store of ``clone_url``, made (bare clone) or brought up to the forge's branches
        (fetch, pruned), under the store's lock; returns its path."""
        store = self.store_for(clone_url)
        self.root.mkdir(parents=True, exist_ok=True)
        with _locked(store.with_suffix(".lock")):
            if _is_whole_store(store):
                harden_bare_store(store)
                _transport(
                    ["fetch", "--quiet", "--prune", clone_url, "+refs/heads/*:refs/heads/*"],
                    store, clone_url, token, git_username,
                )  # fmt: skip
            else:
                partial = store.with_name(store.name + ".partial")
                shutil.rmtree(store, ignore_errors=True)
                shutil.rmtree(partial, ignore_errors=True)
                _transport(
                    ["clone", "--quiet", "--bare", clone_url, str(partial)],
                    self.root, clone_url, token, git_username,
                )  # fmt: skip
                harden_bare_store(partial)
                os.rename(partial, store)
        return store

    def stores(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.glob("*.git") if p.is_dir())


def clone_from_store(store: Path, destination: Path, timeout: float) -> None:
    """``git clone --no-checkout --no-hardlinks store destination``: a local copy, no network,
    no credential; the caller rewrites ``destination``'s config to the forge's."""
    args = ["clone", "--quiet", "--no-checkout", "--no-hardlinks", str(store), str(destination)]
    proc = subprocess.run(
        ["git", *transport_config(str(store)), *args],
        cwd=destination.parent,
        capture_output=True,
        timeout=timeout,
        env=transport_env(destination.parent),
        check=False,
    )
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", errors="replace").strip()[-300:]
        raise ObjectStoreError(f"git clone from the shared store {store.name} failed: {detail}")


def _is_whole_store(store: Path) -> bool:
    """A bare store the product finished making: the rename happens only once it is whole."""
    return (store / "HEAD").is_file() and (store / "objects").is_dir() and not store.is_symlink()


def _transport(args: list[str], cwd: Path, clone_url: str, token: str, git_username: str) -> None:
    env = transport_env(cwd)
    with contextlib.ExitStack() as stack:
        if token and token_allowed(clone_url):
            env.update(stack.enter_context(git_askpass(token, git_username)))
        try:
            proc = subprocess.run(
                ["git", *transport_config(clone_url), *args],
                cwd=cwd,
                capture_output=True,
                timeout=STORE_GIT_TIMEOUT_S,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ObjectStoreError(
                f"git {args[0]} of the shared store timed out after {STORE_GIT_TIMEOUT_S:.0f}s"
            ) from None
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", errors="replace").strip()
        if token:
            detail = detail.replace(token, "***")
        raise ObjectStoreError(f"git {args[0]} of the shared store failed: {detail[-300:]}")


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``lock_path``, waited for at most ``STORE_LOCK_TIMEOUT_S``."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        deadline = time.monotonic() + STORE_LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ObjectStoreError(
                        f"{lock_path.name}: another refresh held the store for over "
                        f"{STORE_LOCK_TIMEOUT_S:.0f}s"
                    ) from None
                time.sleep(STORE_LOCK_POLL_S)
        yield
    finally:
        os.close(fd)
