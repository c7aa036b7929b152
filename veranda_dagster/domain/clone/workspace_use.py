"""What the workspaces folder holds, and when each ticket's clone was last used.

Eviction needs a clone's last use from something the repository cannot forge: the work tree's
own mtimes are the repository's and the agent's to set. So ``Workspace.ensure`` (the start of
every phase that uses a clone) touches ``<root>/_used/<ticket key>``, a file only the product
writes, and ``inventory`` reads it beside each clone's size on disk (allocated blocks, links
not followed, at most ``MAX_WORKSPACE_SCAN_ENTRIES`` entries walked in all). The shared
stores under ``_objects`` are listed apart, each with the clones that borrow from it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from veranda_dagster.domain.clone.borrowed_objects import borrowers
from veranda_dagster.domain.clone.clone_layout import OBJECTS_DIR
from veranda_dagster.domain.core.bounds import MAX_WORKSPACE_SCAN_ENTRIES
from veranda_dagster.domain.core.ticket_key import is_ticket_key, ticket_dir

USED_DIR = "_used"


def mark_used(root: str | Path, ticket_id: str) -> None:
    """Stamp ``ticket_id``'s clone as used now."""
    folder = Path(root) / USED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stamp = ticket_dir(folder, ticket_id)
    stamp.touch()
    os.utime(stamp)


def last_used(root: str | Path, ticket_id: str) -> float | None:
    try:
        return (Path(root) / USED_DIR / ticket_id).stat().st_mtime
    except OSError:
        return None


@dataclass(frozen=True)
class WorkspaceEntry:
    ticket_id: str
    bytes: int
    last_used: float
    """Epoch seconds of the last ``ensure``; a clone never stamped counts from its folder's
    own mtime (made before stamps existed)."""


@dataclass(frozen=True)
class StoreEntry:
    """One repository's shared object store (``object_cache``)."""

    name: str
    bytes: int
    last_used: float
    """Epoch seconds of its last refresh (a clone made from it)."""
    borrowers: frozenset[str] = frozenset()
    """The ticket clones whose records name it (``borrowed_objects``): it stays while any
    of them does."""


@dataclass(frozen=True)
class Inventory:
    clones: list[WorkspaceEntry]
    other_bytes: int
    """Everything else under the root: scratch folders, half-made clones, records."""
    complete: bool = True
    """``False`` when the walk stopped at ``MAX_WORKSPACE_SCAN_ENTRIES``: totals are a floor."""
    stores: list[StoreEntry] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        clones = sum(c.bytes for c in self.clones)
        return self.other_bytes + clones + sum(s.bytes for s in self.stores)


class _Walk:
    def __init__(self, budget: int) -> None:
        self.left = budget
        self.stopped = False
        """Whether an entry was left unmeasured: the budget ran out before the walk did (a
        walk of exactly ``budget`` entries is whole)."""

    def take(self) -> bool:
        """Spend one entry of the budget; ``False`` (and ``stopped``) when none is left."""
        if self.left <= 0:
            self.stopped = True
            return False
        self.left -= 1
        return True

    def size(self, path: Path) -> int:
        """Allocated bytes under ``path`` (the path itself included), links not followed."""
        total = 0
        stack = [path]
        while stack and self.take():
            current = stack.pop()
            try:
                info = current.lstat()
            except OSError:
                continue
            total += info.st_blocks * 512
            if current.is_dir() and not current.is_symlink():
                try:
                    stack.extend(Path(e.path) for e in os.scandir(current))
                except OSError:
                    continue
        return total


def inventory(root: str | Path, budget: int | None = None) -> Inventory:
    """Every ticket clone under ``root`` with its size and last use, and the rest's size,
    walking at most ``budget`` entries (``MAX_WORKSPACE_SCAN_ENTRIES`` unless given)."""
    base = Path(root)
    if not base.is_dir():
        return Inventory([], 0)
    walk = _Walk(MAX_WORKSPACE_SCAN_ENTRIES if budget is None else budget)
    clones: list[WorkspaceEntry] = []
    stores: list[StoreEntry] = []
    other = 0
    for entry in sorted(os.scandir(base), key=lambda e: e.name):
        path = Path(entry.path)
        if is_ticket_key(entry.name) and entry.is_dir(follow_symlinks=False):
            used = last_used(base, entry.name)
            when = used if used is not None else path.lstat().st_mtime
            clones.append(WorkspaceEntry(entry.name, walk.size(path), when))
        elif entry.name == OBJECTS_DIR and entry.is_dir(follow_symlinks=False):
            stores, loose = _stores(path, walk, borrowers(base))
            other += loose
        else:
            other += walk.size(path)
    return Inventory(clones, other, complete=not walk.stopped, stores=stores)


def _stores(folder: Path, walk: _Walk, named: dict[str, set[str]]) -> tuple[list[StoreEntry], int]:
    """Each whole store under ``folder`` with its size, last refresh and borrowers; and the
    bytes of everything else there (lock files, a half-made store)."""
    stores: list[StoreEntry] = []
    walk.take()
    loose = folder.lstat().st_blocks * 512  # the folder itself
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        path = Path(entry.path)
        if entry.name.endswith(".git") and entry.is_dir(follow_symlinks=False):
            when = max(_mtime(path), _mtime(path / "FETCH_HEAD"))
            owners = frozenset(named.get(entry.name, ()))
            stores.append(StoreEntry(entry.name, walk.size(path), when, owners))
        else:
            loose += walk.size(path)
    return stores, loose


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0
