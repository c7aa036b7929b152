"""Which shared object store a ticket's clone borrows from, as the product recorded it.

A clone made from its repository's store (``object_cache``) keeps only what its ticket adds:
git reads every other object through ``.git/objects/info/alternates``, which names the store.
That file is inside ``.git``, which the product's own sandboxed git may write, so it is never
what decides anything: the product records the borrow beside the clone, in
``<workspaces>/.<ticket>.objects``, in the workspace root no sandbox shows (like the setup
step's pointer, ``active_environment``). From that record, and only from it:

* ``harden_git_dir`` writes the alternates file afresh before every transport command (the
  store's ``objects`` folder, nothing else);
* every sandboxed command run in the clone (the product's git, the agent, validation, setup)
  gets the store bound **read-only at its own path** (``store_binds``), so the alternates
  path resolves inside the sandbox and nothing in there can write the objects every other
  ticket of the repository reads;
* the sweep removes a store only when no record names it (``borrowers``).

A record naming anything but a whole store directly under ``<workspaces>/_objects`` is
ignored: the clone then sees no store and its git fails loudly rather than reading elsewhere.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

from veranda_dagster.domain.clone.clone_layout import OBJECTS_DIR, clone_name

RECORD_SUFFIX: Final = ".objects"
MAX_RECORD_BYTES: Final = 512
"""A record holds one store's folder name (under 80 characters); more is not the product's."""

STORE_NAME = re.compile(r"[A-Za-z0-9._-]{1,120}\.git")
"""What ``ObjectCache.store_for`` names a store; a record naming anything else is ignored."""


def record_path(repo_dir: str | Path) -> Path:
    repo = Path(os.path.abspath(repo_dir))
    return repo.parent / f".{clone_name(repo)}{RECORD_SUFFIX}"


def record_borrow(repo_dir: str | Path, store: Path) -> None:
    """Record that ``repo_dir``'s clone borrows ``store``'s objects; written before the clone
    is made, so a sweep that takes the store's lock afterwards sees a borrower."""
    if not STORE_NAME.fullmatch(store.name):
        raise ValueError(f"{store.name!r} is not a shared store's name")
    path = record_path(repo_dir)
    staged = path.with_name(path.name + ".tmp")
    staged.write_text(store.name)
    staged.replace(path)


def forget_borrow(repo_dir: str | Path) -> None:
    record_path(repo_dir).unlink(missing_ok=True)


def borrowed_store(repo_dir: str | Path) -> Path | None:
    """The store ``repo_dir`` borrows from, per the product's record, or ``None`` (a clone
    that holds all its objects, a record that names no whole store under ``_objects``)."""
    path = record_path(repo_dir)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_RECORD_BYTES + 1)
    except OSError:
        return None
    name = raw.decode("ascii", errors="replace").strip()
    if len(raw) > MAX_RECORD_BYTES or not STORE_NAME.fullmatch(name):
        return None
    store = path.parent / OBJECTS_DIR / name
    if store.is_symlink() or not (store / "objects").is_dir() or (store / "objects").is_symlink():
        return None
    return store


def alternates_line(store: Path) -> str:
    """The whole ``objects/info/alternates`` of a clone borrowing ``store``."""
    return f"{os.path.abspath(store / 'objects')}\n"


def store_binds(repo_dir: str | Path) -> dict[str, str]:
    """Read-only binds a sandboxed command in ``repo_dir`` needs to read its borrowed objects:
    the store at its own path (the alternates file names it absolutely), or none."""
    store = borrowed_store(repo_dir)
    if store is None:
        return {}
    where = os.path.abspath(store)
    return {where: where}


def borrowers(root: str | Path) -> dict[str, set[str]]:
    """Store folder name -> the ticket clones whose records name it (a record whose clone is
    half-made counts: its clone is being made)."""
    base = Path(root)
    found: dict[str, set[str]] = {}
    if not base.is_dir():
        return found
    for entry in os.scandir(base):
        if entry.name.startswith(".") and entry.name.endswith(RECORD_SUFFIX):
            ticket = entry.name[1 : -len(RECORD_SUFFIX)]
            store = borrowed_store(base / ticket)
            if store is not None:
                found.setdefault(store.name, set()).add(ticket)
    return found
