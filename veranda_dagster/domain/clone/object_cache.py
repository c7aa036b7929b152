"""One object store per repository, shared by its tickets' clones: a new clone costs seconds
and only the bytes its ticket adds.

Every ticket used to make a full-history clone of its repository over the network (376 MB and
minutes for a sympy-sized one), then a full local copy of a shared store. Now the worker keeps
one bare store per repository under ``<workspaces>/_objects/``, fetched from the forge before
each new clone (only what changed since the last ticket), and a ticket's clone is made from it
with ``git clone --shared``: the clone's ``objects/info/alternates`` names the store's objects,
so the clone holds its checkout, its index and the objects its ticket adds, nothing else.
After that the clone's ``origin`` is the forge again (``harden_git_dir`` rewrites its config
and, from the product's record ``borrowed_objects``, its alternates) and ``Workspace.ensure``
fetches from the forge as before; push reads the store's objects through the same alternates.

Sandboxed commands see the store because every sandbox started in a clone binds it
read-only at its own path (``borrowed_objects.store_binds``): the objects every ticket of the
repository reads can be written by no repository code, agent or product git in the sandbox.
The store is on disk, so it survives a worker restart; a store that is not whole (a killed
first clone) is made again. Objects are never removed from a store (no gc or prune runs on it:
``transport_config`` turns automatic gc off), so a clone never loses an object it borrows;
the whole store is removed by the sweep only when no clone's record names it
(``remove_unborrowed``, under the store's lock).

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

from veranda_dagster.domain.clone.borrowed_objects import borrowers
from veranda_dagster.domain.clone.git_command import GitError, git_askpass, token_allowed
from veranda_dagster.domain.clone.git_transport import (
    harden_bare_store,
    run_transport,
    transport_env,
)

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

    def remove_unborrowed(self, store: Path) -> bool:
        """Remove ``store`` unless a clone's record names it, deciding under the store's lock
        (a clone records its borrow before it refreshes the store, so one starting now is
        seen); returns whether it was removed."""
        if store.parent != self.root or not store.name.endswith(".git"):
            raise ObjectStoreError(f"{store} is not one of this cache's stores")
        with _locked(store.with_suffix(".lock")):
            if store.name in borrowers(self.root.parent):
                return False
            shutil.rmtree(store, ignore_errors=True)
            return True

    def stores(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.glob("*.git") if p.is_dir())


def clone_from_store(store: Path, destination: Path, timeout: float) -> None:
    """``git clone --no-checkout --shared store destination``: refs only, objects borrowed
    through alternates, no network, no credential; the caller rewrites ``destination``'s config
    to the forge's and its alternates from the product's record."""
    args = ["clone", "--quiet", "--no-checkout", "--shared", str(store), str(destination)]
    try:
        proc = run_transport(
            args, destination.parent, str(store), transport_env(destination.parent), timeout
        )
    except subprocess.TimeoutExpired:
        raise ObjectStoreError(
            f"git clone from the shared store {store.name} timed out after {timeout:.0f}s"
        ) from None
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
            proc = run_transport(args, cwd, clone_url, env, STORE_GIT_TIMEOUT_S)
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
