"""``ticket_run_failures``: a failed run tells its ticket, once.

A run-failure sensor (the daemon hands it each failed run once, and keeps a cursor) reads
the run's events for the phase that failed and its error type, the value store for the phases
that are kept, and posts ``domain.core.run_failure.failure_note`` on the ticket's own channel (a
Linear or Jira comment or a reply in the Slack thread, through the enabled sources of the
shared ``tickets`` resource). Posting goes through ``TicketChannel`` with the run id as its
key, so a second evaluation of the same run (a reset cursor, a second daemon) finds the
first comment and posts nothing.

Not told: a run that run retries will retry (``dagster/will_retry``: its retry tells, if it
fails), a twin refused by the one-run-per-ticket guard (nothing failed), and runs that
belong to no ticket partition.
"""

from __future__ import annotations

import os
import re
from typing import Any

import dagster as dg

from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.phases import PHASES
from veranda_dagster.domain.core.run_failure import RunFailure, failure_note
from veranda_dagster.partitions import TICKET_TAG, is_ticket_key
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.sources import registry
from veranda_dagster.sources.channel import TicketChannel
from veranda_dagster.sources.sensor_status import sensor_default_status
from veranda_dagster.storage import ValueStore

RUN_FAILURE_POLL_INTERVAL_S = 15
"""How often the daemon hands the sensor new failed runs: a person waits at most this long."""
UI_URL_ENV = "VERANDA_UI_URL"
"""The Dagster UI's base URL, so the note links the run (``veranda dev`` sets it)."""
NOT_TOLD = frozenset({"TicketRunInProgressError"})
"""Error types that are no failure of the ticket's work."""
WILL_RETRY_TAG = "dagster/will_retry"
PARTITION_TAG = "dagster/partition"


def ticket_key(run: dg.DagsterRun) -> str | None:
    key = run.tags.get(TICKET_TAG) or run.tags.get(PARTITION_TAG)
    return key if key and is_ticket_key(key) else None


def _error_type(data: Any) -> str:
    """The typed error the shell attached (``dg.Failure`` metadata ``error``), else the
    innermost exception class that is not a Dagster wrapper."""
    user = data.user_failure_data
    if user is not None and "error" in user.metadata:
        return str(getattr(user.metadata["error"], "value", user.metadata["error"]))
    error = data.error
    name = error.cls_name if error else "UnknownError"
    while error is not None:
        if error.cls_name and not error.cls_name.startswith("Dagster"):
            name = error.cls_name
        error = error.cause
    return name or "UnknownError"


def _root_cause(data: Any, error_type: str) -> str:
    """The failure's cause line: the shell's ``detail`` (the typed error's own message), else
    the message of the innermost error of ``error_type`` in the chain, never a wrapper's
    ("Exceeded max_retries of 1")."""
    user = data.user_failure_data
    if user is not None:
        detail = user.metadata.get("detail")
        return str(getattr(detail, "value", detail)) if detail else (user.description or "")
    error, found = data.error, ""
    while error is not None:
        if error.cls_name == error_type or not found:
            found = error.message or ""
        error = error.cause
    prefix = re.compile(rf"^[\w.]*\b{re.escape(error_type)}:\s*")
    return prefix.sub("", found.strip())


def _step_label(step_key: str) -> str:
    if step_key in PHASES:
        return step_key
    for phase in PHASES:
        if step_key.startswith(f"{phase}_"):
            return f"{phase} (check {step_key[len(phase) + 1 :]})"
    return step_key


def read_failure(
    instance: dg.DagsterInstance, run: dg.DagsterRun, key: str, store: ValueStore
) -> RunFailure:
    """The failed step (the last one to fail for good), its error, and what is stored."""
    failures = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
    phase: str | None = None
    error_type, line = "RunFailure", ""
    if failures:
        event = failures[-1].dagster_event
        data = event.step_failure_data if event else None
        phase = _step_label(failures[-1].step_key or "")
        if data is not None:
            error_type = _error_type(data)
            line = _root_cause(data, error_type)
    else:
        ends = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
        if ends and ends[-1].dagster_event is not None:
            line = ends[-1].dagster_event.message or ""
    stored = [name for name in PHASES if store.values().exists(name, key)]
    return RunFailure(
        ticket=key,
        run_id=run.run_id,
        phase=phase,
        error_type=error_type,
        error_line=line,
        stored_phases=stored,
        ui_url=os.environ.get(UI_URL_ENV) or None,
    )


def ticket_for(key: str, store: ValueStore) -> Ticket:
    """The stored ticket (it names the issue or the thread), or, when the run failed before
    ``ticket`` was stored, the address the key itself carries (its source's grammar)."""
    if store.values().exists("ticket", key):
        ticket = store.load("ticket", key)
        if isinstance(ticket, Ticket):
            return ticket
    return registry.address(key)


def tell_ticket(
    instance: dg.DagsterInstance,
    run: dg.DagsterRun,
    channel: TicketChannel,
    store: ValueStore,
) -> str | None:
    """Post the note for ``run`` once; returns the comment id, or ``None`` when not told."""
    key = ticket_key(run)
    if key is None or run.tags.get(WILL_RETRY_TAG) == "true":
        return None
    failure = read_failure(instance, run, key, store)
    if failure.error_type in NOT_TOLD:
        return None
    return channel.post(
        ticket_for(key, store), failure_note(failure), key=f"run-failed:{run.run_id}"
    )


@dg.run_failure_sensor(
    name="ticket_run_failures",
    minimum_interval_seconds=RUN_FAILURE_POLL_INTERVAL_S,
    default_status=sensor_default_status(),
    description="A failed ticket run (sensor, backfill, UI) posts one note on its ticket: the "
    "phase, the error type, that stored phases are kept, and how to rerun.",
)
def ticket_run_failures(
    context: dg.RunFailureSensorContext,
    tickets: TicketSourcesResource,
    value_store: ValueStore,
) -> None:
    try:
        with tickets.connected() as channel:
            posted = tell_ticket(context.instance, context.dagster_run, channel, value_store)
    except VerandaError as exc:
        # the note is a courtesy: a channel that is down must not wedge the sensor's cursor
        context.log.warning(f"run {context.dagster_run.run_id}: note not posted: {exc}")
        return
    if posted:
        context.log.info(f"run {context.dagster_run.run_id}: told ticket ({posted})")
