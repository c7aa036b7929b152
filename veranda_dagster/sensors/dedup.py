"""One run per ticket, decided by the Dagster instance and never by process memory.

A sensor's in-memory state is empty after a restart or a deploy, so the first tick after one
would open a second PR. The instance outlives the process: a ticket already has a run if a run
tagged with its key is queued, starting, running or succeeded, or if its partition exists and
has been materialized. Each is one query per tick for all the tick's keys (runs by tag, then
the latest materialization of only those partitions), never one per ticket and never a scan
of every partition the instance holds.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

from veranda_dagster.partitions import TICKET_TAG, TICKETS, TICKETS_NAME

HELD_STATUSES = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
    dg.DagsterRunStatus.SUCCESS,
]
"""Statuses that mean the ticket is taken: in flight, or done. A failed or canceled run does
not hold the ticket by itself; its materialized partition does."""

TICKET_ASSET = dg.AssetKey("ticket")
"""The first asset of the graph: a materialized partition of it means the ticket was taken."""


def tickets_with_runs(
    instance: dg.DagsterInstance, keys: Iterable[str], asset_key: dg.AssetKey = TICKET_ASSET
) -> set[str]:
    """The subset of ``keys`` that already has a run (held status) or a materialization."""
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return set()
    runs = instance.get_runs(
        filters=dg.RunsFilter(tags={TICKET_TAG: wanted}, statuses=HELD_STATUSES)
    )
    taken = {run.tags.get(TICKET_TAG) for run in runs} & set(wanted)
    rest = {k for k in wanted if k not in taken}
    if rest:  # one query, filtered to these partitions: O(keys asked), not O(all tickets)
        materialized = instance.get_latest_storage_id_by_partition(
            asset_key, dg.DagsterEventType.ASSET_MATERIALIZATION, partitions=rest
        )
        taken |= set(materialized) & rest
    return {k for k in taken if k}


def tickets_known(instance: dg.DagsterInstance, keys: Iterable[str]) -> set[str]:
    """The subset of ``keys`` the instance knows at all: a run in any status (a failed one is
    re-executed, not twinned) or a registered partition (its sensor added it and its run is
    about to be created). A Slack mention of such a ticket must not become a second run of it."""
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return set()
    runs = instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: wanted}))
    known = {run.tags.get(TICKET_TAG) for run in runs} & set(wanted)
    known |= {k for k in wanted if instance.has_dynamic_partition(TICKETS_NAME, k)}
    return {k for k in known if k}


def new_tickets(instance: dg.DagsterInstance, keys: Iterable[str]) -> list[str]:
    """``keys`` in first-seen order, once each, without the ones the instance already holds."""
    ordered = list(dict.fromkeys(keys))
    taken = tickets_with_runs(instance, ordered)
    return [k for k in ordered if k not in taken]


def ticket_run_request(key: str) -> dg.RunRequest:
    """The one run for a ticket: ``run_key`` = the key, so Dagster itself also refuses twins."""
    return dg.RunRequest(
        partition_key=key,
        run_key=key,
        tags={TICKET_TAG: key, "veranda/ticket-run": "1"},
    )


def sensor_result(keys: list[str], cursor: str) -> dg.SensorResult:
    """Add the partitions and request one run per new ticket, with the advanced cursor."""
    return dg.SensorResult(
        run_requests=[ticket_run_request(k) for k in keys],
        dynamic_partitions_requests=[TICKETS.build_add_request(keys)] if keys else [],
        cursor=cursor,
    )
