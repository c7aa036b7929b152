"""The ``workspace_sweep`` sensor: keeps the worker's workspaces within their bound.

Every ``WORKSPACE_SWEEP_INTERVAL_S`` it lists the ticket clones, asks the instance which of
those tickets have a run in flight (one runs query, ``ticket_holds``) and the forge which of
their pull requests are no longer open (at most ``MAX_SWEEP_PR_CHECKS`` a tick: a ticket whose
``pull_request`` phase recorded a PR and whose branch has no open PR now was merged or
closed), then lets ``WorkspaceResource.sweep`` remove what ``plan_sweep`` picks and records the
outcome for ``/metrics`` (``sweep_record``). It requests no runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import dagster as dg

from veranda_dagster.domain.clone.sweep_record import write_sweep_record
from veranda_dagster.domain.core.bounds import (
    MAX_SWEEP_PR_CHECKS,
    MAX_WORKSPACE_SCAN_ENTRIES,
    WORKSPACE_SWEEP_INTERVAL_S,
)
from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.domain.core.forge_port import Forge
from veranda_dagster.domain.core.ticket_key import is_ticket_key
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.workspace import WorkspaceResource, branch_for
from veranda_dagster.sources.dedup import ticket_holds
from veranda_dagster.sources.sensor_status import sensor_default_status

PULL_REQUEST = dg.AssetKey("pull_request")
PrUrlParser = Callable[[str], tuple[str, int] | None]


def clone_keys(root: str | Path) -> list[str]:
    """The ticket keys that have a clone under ``root`` (names only: no walk)."""
    base = Path(root)
    if not base.is_dir():
        return []
    return sorted(e.name for e in os.scandir(base) if is_ticket_key(e.name) and e.is_dir())


def closed_pull_requests(
    instance: dg.DagsterInstance,
    keys: Iterable[str],
    forge: Forge,
    parse_pr_url: PrUrlParser,
    start: int = 0,
) -> set[str]:
    """Tickets among ``keys`` whose recorded PR is merged or closed (no open PR from the
    ticket's branch any more); at most ``MAX_SWEEP_PR_CHECKS`` are asked, in key order from the
    ``start``-th (wrapping), so ticks that advance ``start`` by the bound ask every ticket in
    turn: a first twenty whose PRs stay open cannot keep the rest from ever being asked."""
    wanted = list(keys)
    if not wanted:
        return set()
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=PULL_REQUEST, asset_partitions=wanted),
        limit=len(wanted) * 4,
    ).records
    repos: dict[str, str] = {}
    for record in records:
        mat = record.asset_materialization
        if mat is None or not mat.partition or mat.partition in repos:
            continue
        url = getattr(mat.metadata.get("pr_url"), "value", "")
        parsed = parse_pr_url(str(url or ""))
        if parsed:
            repos[mat.partition] = parsed[0]
    ordered = sorted(repos)
    first = start % len(ordered) if ordered else 0
    closed: set[str] = set()
    for key in (ordered[first:] + ordered[:first])[:MAX_SWEEP_PR_CHECKS]:
        if forge.find_pull_request(repos[key], branch_for(key)) is None:
            closed.add(key)
    return closed


@dg.sensor(
    name="workspace_sweep",
    minimum_interval_seconds=WORKSPACE_SWEEP_INTERVAL_S,
    default_status=sensor_default_status(),
    description="Keeps the ticket clones within VERANDA_WORKSPACES_MAX_BYTES (oldest finished "
    "first), removes closed-PR and stale clones, never one whose run is in flight.",
)
def workspace_sweep(
    context: dg.SensorEvaluationContext, workspace: WorkspaceResource, forge: ForgeResource
) -> dg.SkipReason:
    keys = clone_keys(workspace.root_dir)
    in_flight = ticket_holds(context.instance, keys).in_flight
    closed: set[str] = set()
    if forge.configured and keys:
        client = forge.client()
        cursor = context.cursor or ""
        start = int(cursor) if cursor.isdigit() else 0
        context.update_cursor(str(start + MAX_SWEEP_PR_CHECKS))  # the next tick asks the next
        try:
            closed = closed_pull_requests(context.instance, keys, client, forge.parse_pr_url, start)
        except VerandaError as exc:  # the forge is down: sweep by age and size this tick
            context.log.warning(f"workspace_sweep: pull request states not read: {exc}")
        finally:
            client.close()
    now = time.time()
    plan = workspace.sweep(now, in_progress=in_flight, closed=closed)
    write_sweep_record(workspace.root_dir, plan, workspace.max_total_bytes, now)
    if plan.over_bound:
        context.log.warning(
            f"workspace_sweep: {plan.total_bytes} bytes over the {workspace.max_total_bytes} "
            "bound, and every remaining clone's run is in flight or just used"
        )
    gone = [f"{e.ticket_id} ({e.reason})" for e in plan.evict]
    gone += [f"store {s.name} (no clone borrows it)" for s in plan.evict_stores]
    removed = ", ".join(gone) or "nothing"
    kept = f"{plan.total_bytes} bytes kept"
    if not plan.measured_all:
        kept = f"at least {kept} (measuring stopped at {MAX_WORKSPACE_SCAN_ENTRIES} entries)"
        context.log.warning(f"workspace_sweep: {kept}")
    return dg.SkipReason(f"workspace_sweep: removed {removed}; {kept}")
