"""The ``acmedesk_tickets`` sensor: tickets assigned to the bot since the cursor become runs.

The shared intake (``sources.intake``) does the rest: it skips until the source is configured,
opens and closes the client, asks the instance which keys already have a run, and keeps the
cursor when the walk fails."""

from __future__ import annotations

from typing import Any

import dagster as dg

from veranda_dagster.domain.core.errors import InputError, TransientError
from veranda_dagster.domain.core.ticket_key import is_ticket_key
from veranda_dagster.http.client import HttpStatusError
from veranda_dagster.sources.intake import JsonCursor, Walk, intake_sensor, polled, settle
from veranda_dagster.sources.sensor_status import sensor_default_status

from .client import AcmeDeskClient
from .ticket import NAME, PREFIX

POLL_INTERVAL_S = 60


class AcmeDeskCursor(JsonCursor):
    SENSOR = "acmedesk_tickets"

    since: str | None = None
    """The newest ``updated_at`` seen: the next walk asks only for what changed after it."""


def poll_acmedesk(
    instance: dg.DagsterInstance, client: AcmeDeskClient, raw_cursor: str | None, log: Any
) -> dg.SensorResult | dg.SkipReason:
    cursor = AcmeDeskCursor.parse(raw_cursor)
    found, high, error = [], cursor.since, None
    try:
        for ticket in client.assigned_since(cursor.since):
            ref, updated = ticket.get("key"), ticket.get("updated_at")
            if isinstance(ref, str) and isinstance(updated, str) and is_ticket_key(PREFIX + ref):
                found.append(PREFIX + ref)
                high = max(high or updated, updated)
    except (TransientError, InputError, HttpStatusError) as exc:
        error = str(exc)
    nxt = cursor if error else AcmeDeskCursor(since=high)
    return settle(instance, NAME, Walk(found, nxt.dump, error), log)


acmedesk_tickets = intake_sensor(
    name=AcmeDeskCursor.SENSOR,
    source=NAME,
    tick=polled(poll_acmedesk),
    interval_s=POLL_INTERVAL_S,
    default_status=sensor_default_status(),
    description="Acme Desk tickets assigned to the bot -> ticket runs.",
)
