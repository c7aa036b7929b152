"""Which ticket clones to remove so the workspaces stay within their bound.

A ticket's clone is disposable (the forge holds its branch; ``Workspace.ensure`` recreates it
from the repository's shared store), but a clone whose run is in progress is the run's working
copy. So a sweep plans, in order:

1. nothing of a ticket with a run in flight, nor of one used in the last
   ``WORKSPACE_EVICTION_GRACE_S`` (a run starting between the instance query and the removal);
2. every other clone whose pull request was merged or closed (``closed``);
3. every other clone unused for longer than ``max_age_s``;
4. then, while the total (clones plus shared stores) is over ``max_bytes``, the remaining
   clones oldest-finished first (least recently used);
5. then, while still over, the shared stores no remaining clone borrows from, least recently
   refreshed first. A store a clone borrows from is never planned: that clone reads its
   objects there (``borrowed_objects``). The removal itself decides again under the store's
   lock (``ObjectCache.remove_unborrowed``), so a clone starting meanwhile keeps its store.

When only protected clones are left and the total is still over, the plan says so
(``over_bound``) rather than touching them.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from veranda_dagster.domain.clone.borrowed_objects import forget_borrow
from veranda_dagster.domain.clone.workspace_use import USED_DIR, Inventory
from veranda_dagster.domain.core.bounds import WORKSPACE_EVICTION_GRACE_S
from veranda_dagster.domain.core.ticket_key import ticket_dir

EvictionReason = Literal["closed", "age", "size"]


@dataclass(frozen=True)
class Eviction:
    ticket_id: str
    bytes: int
    reason: EvictionReason


@dataclass(frozen=True)
class StoreEviction:
    name: str
    """The store's folder under ``_objects``."""
    bytes: int


@dataclass
class SweepPlan:
    evict: list[Eviction] = field(default_factory=list)
    total_bytes: int = 0
    """The workspaces' size once the plan is carried out."""
    over_bound: bool = False
    """Still over ``max_bytes`` with nothing evictable left (every remaining clone's run is in
    progress or was just used)."""
    evict_stores: list[StoreEviction] = field(default_factory=list)
    measured_all: bool = True
    """``False`` when measuring stopped at ``MAX_WORKSPACE_SCAN_ENTRIES``: ``total_bytes`` is
    then a lower bound (the rest was not walked)."""


def plan_sweep(
    found: Inventory,
    *,
    max_bytes: int,
    max_age_s: float,
    now: float,
    in_progress: Collection[str] = (),
    closed: Collection[str] = (),
    grace_s: float = WORKSPACE_EVICTION_GRACE_S,
) -> SweepPlan:
    """The evictions that bring ``found`` within ``max_bytes`` (see the module docstring)."""
    busy = set(in_progress)
    free = [c for c in found.clones if c.ticket_id not in busy and now - c.last_used > grace_s]
    total = found.total_bytes
    plan = SweepPlan(measured_all=found.complete)
    for clone in sorted(free, key=lambda c: (c.last_used, c.ticket_id)):
        reason: EvictionReason | None = None
        if clone.ticket_id in closed:
            reason = "closed"
        elif now - clone.last_used > max_age_s:
            reason = "age"
        if reason is not None:
            plan.evict.append(Eviction(clone.ticket_id, clone.bytes, reason))
            total -= clone.bytes
    chosen = {e.ticket_id for e in plan.evict}
    for clone in sorted(free, key=lambda c: (c.last_used, c.ticket_id)):
        if total <= max_bytes:
            break
        if clone.ticket_id not in chosen:
            plan.evict.append(Eviction(clone.ticket_id, clone.bytes, "size"))
            total -= clone.bytes
    kept = {c.ticket_id for c in found.clones} - {e.ticket_id for e in plan.evict}
    for store in sorted(found.stores, key=lambda s: (s.last_used, s.name)):
        if total <= max_bytes:
            break
        if not store.borrowers & kept:
            plan.evict_stores.append(StoreEviction(store.name, store.bytes))
            total -= store.bytes
    plan.total_bytes = total
    plan.over_bound = total > max_bytes
    return plan


def remove_workspace(root: str | Path, ticket_id: str) -> None:
    """The ticket's clone and its use stamp; the path comes from the key grammar, so a
    hostile key cannot name anything outside ``root``."""
    clone = ticket_dir(root, ticket_id)
    shutil.rmtree(clone, ignore_errors=True)
    forget_borrow(clone)  # after the clone: a store is never left without a live borrower's record
    (Path(root) / USED_DIR / ticket_id).unlink(missing_ok=True)
