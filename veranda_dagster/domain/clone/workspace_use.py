"""What the workspaces folder holds, and when each ticket's clone was last used.

Eviction needs a clone's last use from something the repository cannot forge: the work tree's
own mtimes are the repository's and the agent's to set. So ``Workspace.ensure`` (the start of
every phase that uses a clone) touches ``<root>/_used/<ticket key>``, a file only the product
writes, and ``inventory`` reads it beside each clone's size on disk (allocated blocks, links
not followed, at most ``MAX_WORKSPACE_SCAN_ENTRIES`` entries walked in all).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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
class Inventory:
    clones: list[WorkspaceEntry]
    other_bytes: int
    """Everything else under the root: the shared stores, scratch folders, half-made clones."""
    complete: bool = True
    """``False`` when the walk stopped at ``MAX_WORKSPACE_SCAN_ENTRIES``: totals are a floor."""

    @property
    def total_bytes(self) -> int:
        return self.other_bytes + sum(c.bytes for c in self.clones)


class _Walk:
    def __init__(self, budget: int) -> None:
        self.left = budget

    def size(self, path: Path) -> int:
        """Allocated bytes under ``path`` (the path itself included), links not followed."""
        total = 0
        stack = [path]
        while stack and self.left > 0:
            current = stack.pop()
            self.left -= 1
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


def inventory(root: str | Path, budget: int = MAX_WORKSPACE_SCAN_ENTRIES) -> Inventory:
    """Every ticket clone under ``root`` with its size and last use, and the rest's size."""
    base = Path(root)
    if not base.is_dir():
        return Inventory([], 0)
    walk = _Walk(budget)
    clones: list[WorkspaceEntry] = []
    other = 0
    for entry in sorted(os.scandir(base), key=lambda e: e.name):
        path = Path(entry.path)
        if is_ticket_key(entry.name) and entry.is_dir(follow_symlinks=False):
            used = last_used(base, entry.name)
            when = used if used is not None else path.lstat().st_mtime
            clones.append(WorkspaceEntry(entry.name, walk.size(path), when))
        else:
            other += walk.size(path)
    return Inventory(clones, other, complete=walk.left > 0)
