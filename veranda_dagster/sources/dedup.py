"""One run per ticket, decided by the Dagster instance and never by process memory.

A sensor's in-memory state is empty after a restart or a deploy, so the first tick after one
would open a second PR. The instance outlives the process. Every question a sensor asks of it
is answered by **one** runs query per tick for all the tick's keys (runs tagged with any of the
keys, any status), never one per ticket and never a scan of every partition:

- **taken** (``held_tickets``, the default): a run of the ticket is queued, starting, running
  or succeeded, or some run of it materialized ``ticket``. The second part is read from the run
  itself: ``ticket``'s success hook tags its run ``veranda/ticket-materialized`` (``mark_taken``),
  so a run that failed after ``ticket`` keeps holding its ticket (it is re-executed, not
  twinned) while one that failed before holds nothing and the ticket may be triggered again.
- **known** (``any_run=True``): a run of the ticket exists at all, in any status, or its
  partition is registered (a sensor added it and the daemon has not created its run yet). A
  Slack mention of such a ticket must not become a second run of it, and Jira uses it to tell
  "failed before materializing" from "never seen". The registered half is a second batched
  call (``get_existing_dynamic_partitions`` for all the keys), made only when it is asked for.

A ticket whose runs all failed before ``ticket`` materialized is new work again, but Dagster's
daemon refuses a sensor's run request whose ``run_key`` one of that sensor's runs already has,
whatever its status. So the Nth run of a ticket carries its own key (``ticket_run_key``:
``ENG-7``, then ``ENG-7:run-2``), and a ticket gets at most ``MAX_TICKET_RUNS`` of them: one whose
every run dies before its first phase (a broken setting, a source that answers garbage) must not
start a run on every tick forever.

Only when a key's runs all ended without holding and none carries the mark (runs written before
the mark existed, or a crash between the materialization and its hook) is the event log asked,
once, for those keys' latest ``ticket`` materializations: the rare path, never the common one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

import dagster as dg

from veranda_dagster.partitions import TICKET_TAG, TICKET_TAKEN_TAG, TICKETS, TICKETS_NAME

HELD_STATUSES = frozenset(
    {
        dg.DagsterRunStatus.QUEUED,
        dg.DagsterRunStatus.NOT_STARTED,
        dg.DagsterRunStatus.STARTING,
        dg.DagsterRunStatus.STARTED,
        dg.DagsterRunStatus.CANCELING,
        dg.DagsterRunStatus.SUCCESS,
    }
)
"""Statuses that mean the ticket is taken: in flight, or done. A failed or canceled run does
not hold the ticket by itself; that it materialized ``ticket`` does."""

IN_FLIGHT_STATUSES = HELD_STATUSES - {dg.DagsterRunStatus.SUCCESS}
"""Statuses of a run that is still going to execute phases: a second run now would be a twin."""

MAX_TICKET_RUNS: Final = 3
"""Runs a sensor starts for one ticket whose runs keep failing before ``ticket`` materializes;
past it the ticket is left for a person (a re-execution from the UI, or a fixed setting)."""

TICKET_ASSET = dg.AssetKey("ticket")
"""The first asset of the graph: a materialized partition of it means the ticket was taken."""


@dataclass(frozen=True)
class TicketHolds:
    """What one runs query says about a tick's keys."""

    known: frozenset[str]
    """Keys with a run in any status (or a registered partition, when asked for)."""
    taken: frozenset[str]
    """Keys with a run in a held status, or a run that materialized ``ticket``."""
    in_flight: frozenset[str]
    """Keys with a run that has not finished yet."""
    runs: Mapping[str, int] = field(default_factory=dict)
    """How many runs each known key has, in any status (keys with none are absent)."""


def ticket_holds(
    instance: dg.DagsterInstance,
    keys: Iterable[str],
    *,
    registered: bool = False,
    asset_key: dg.AssetKey = TICKET_ASSET,
) -> TicketHolds:
    """One runs query for all ``keys`` (plus, with ``registered``, one partitions query, and,
    only for keys whose runs all ended unmarked, one materialization query); see the module
    docstring for what each set means."""
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return TicketHolds(frozenset(), frozenset(), frozenset())
    runs = instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: wanted}))
    asked = set(wanted)
    counts: dict[str, int] = {}
    known: set[str] = set()
    taken: set[str] = set()
    in_flight: set[str] = set()
    for run in runs:
        key = run.tags.get(TICKET_TAG)
        if key not in asked:
            continue
        known.add(key)
        counts[key] = counts.get(key, 0) + 1
        if run.status in HELD_STATUSES or run.tags.get(TICKET_TAKEN_TAG):
            taken.add(key)
        if run.status in IN_FLIGHT_STATUSES:
            in_flight.add(key)
    unmarked = known - taken
    if unmarked:  # the rare path: runs older than the mark, or a crash before its hook ran
        materialized = instance.get_latest_storage_id_by_partition(
            asset_key, dg.DagsterEventType.ASSET_MATERIALIZATION, partitions=unmarked
        )
        taken |= set(materialized) & unmarked
    if registered:
        known |= set(instance.get_existing_dynamic_partitions(TICKETS_NAME, wanted)) & asked
    return TicketHolds(frozenset(known), frozenset(taken), frozenset(in_flight), counts)


def held_tickets(
    instance: dg.DagsterInstance, keys: Iterable[str], *, any_run: bool = False
) -> set[str]:
    """The subset of ``keys`` the instance holds: taken (default), or with ``any_run`` known
    at all (a run in any status, a failed one included, or a registered partition)."""
    holds = ticket_holds(instance, keys, registered=any_run)
    return set(holds.known if any_run else holds.taken)


def new_tickets(instance: dg.DagsterInstance, keys: Iterable[str]) -> list[str]:
    """``keys`` in first-seen order, once each, without the ones the instance already holds."""
    ordered = list(dict.fromkeys(keys))
    taken = held_tickets(instance, ordered)
    return [k for k in ordered if k not in taken]


@dg.success_hook(name="mark_ticket_taken")
def mark_taken(context: dg.HookContext) -> None:
    """After ``ticket`` materialized, say so on the run, where the dedup query reads it."""
    context.instance.add_run_tags(context.run_id, {TICKET_TAKEN_TAG: "1"})


def ticket_run_key(key: str, earlier_runs: int = 0) -> str:
    """The ``run_key`` of a ticket's next run: the key itself for its first, so Dagster also
    refuses twins (and a pushed run counts as the sensor's), then ``<key>:run-<n>``."""
    return key if earlier_runs <= 0 else f"{key}:run-{earlier_runs + 1}"


def ticket_run_request(key: str, earlier_runs: int = 0) -> dg.RunRequest:
    """The next run for a ticket with ``earlier_runs`` runs that all failed before ``ticket``
    (none, almost always): its own ``run_key``, so the daemon's check refuses only twins."""
    return dg.RunRequest(
        partition_key=key,
        run_key=ticket_run_key(key, earlier_runs),
        tags={TICKET_TAG: key, "veranda/ticket-run": "1"},
    )


def sensor_result(
    keys: list[str], cursor: str, earlier_runs: Mapping[str, int] | None = None
) -> dg.SensorResult:
    """Add the partitions and request one run per new ticket (``earlier_runs``: what
    ``TicketHolds.runs`` counted), with the advanced cursor."""
    counts = earlier_runs or {}
    return dg.SensorResult(
        run_requests=[ticket_run_request(k, counts.get(k, 0)) for k in keys],
        dynamic_partitions_requests=[TICKETS.build_add_request(keys)] if keys else [],
        cursor=cursor,
    )
