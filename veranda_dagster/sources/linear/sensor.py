"""The ``linear_tickets`` sensor: new Linear work becomes a ``tickets`` partition and one run.

Each tick asks Linear only for issues updated since the cursor's high-water mark (moved back a
few seconds, so same-second updates are not skipped), walks the pages up to a bound, and only
moves the mark once the walk is complete: a walk cut by the page bound resumes from Linear's page
cursor, and a walk cut by an error keeps the old cursor, so no ticket is ever skipped. Whether a
ticket already has a run is asked of the instance (``dedup``), so a re-seen or edited issue, or a
restart, never yields a second run.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import dagster as dg
from pydantic import Field

from veranda_dagster.domain.core.bounds import CURSOR_OVERLAP_S, MAX_CURSOR_RECENT
from veranda_dagster.domain.core.errors import InputError, TransientError
from veranda_dagster.partitions import is_ticket_key
from veranda_dagster.sources.intake import JsonCursor, Walk, intake_sensor, polled, settle
from veranda_dagster.sources.linear.client import LinearApiError, LinearClient
from veranda_dagster.sources.linear.limits import LINEAR_POLL_INTERVAL_S
from veranda_dagster.sources.linear.ticket import NAME
from veranda_dagster.sources.sensor_status import sensor_default_status


class LinearCursor(JsonCursor):
    """The sensor's JSON cursor."""

    SENSOR = "linear_tickets"

    since: str | None = None
    """High-water mark: only issues with ``updatedAt`` after this are asked for."""
    after: str | None = None
    """Linear page cursor of a walk cut by the page bound; the next tick resumes there."""
    pending: str | None = None
    """Highest ``updatedAt`` seen in the unfinished walk; becomes ``since`` when it completes."""
    recent: dict[str, str] = Field(default_factory=dict)
    """identifier -> updatedAt already handled, to skip re-seen items in the overlap."""


def _minus_overlap(stamp: str) -> str:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    moment -= timedelta(seconds=CURSOR_OVERLAP_S)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _trim(recent: dict[str, str], since: str | None) -> dict[str, str]:
    kept = {k: v for k, v in recent.items() if since is None or v > since}
    newest = sorted(kept.items(), key=lambda kv: kv[1], reverse=True)[:MAX_CURSOR_RECENT]
    return dict(newest)


def poll_linear(
    instance: dg.DagsterInstance, client: LinearClient, raw_cursor: str | None, log: Any
) -> dg.SensorResult | dg.SkipReason:
    """One tick's work, separated from the decorator so it reads (and tests) as a function."""
    cursor = LinearCursor.parse(raw_cursor)
    found: dict[str, str] = {}
    high = cursor.pending
    after, complete, error = cursor.after, False, None
    try:
        for nodes, page_info in client.iter_issue_pages(cursor.since, cursor.after):
            for node in nodes:
                key, updated = node.get("identifier"), node.get("updatedAt")
                if not isinstance(key, str) or not is_ticket_key(key):
                    log.warning(
                        f"linear_tickets: skipped an issue without a valid identifier: {key!r}"
                    )
                    continue
                if not isinstance(updated, str):
                    log.warning(f"linear_tickets: {key} has no updatedAt; taken, mark unchanged")
                    found.setdefault(key, "")
                    continue
                high = max(high or updated, updated)
                if cursor.recent.get(key) != updated:
                    found.setdefault(key, updated)
            after = page_info.get("endCursor")
            complete = not page_info["hasNextPage"]
    except (TransientError, InputError, LinearApiError) as exc:
        error = exc
    recent = {**cursor.recent, **{k: v for k, v in found.items() if v}}
    if error is not None:
        nxt = cursor
    elif complete:
        since = _minus_overlap(high) if high else cursor.since
        nxt = LinearCursor(since=since, recent=_trim(recent, since))
    else:
        nxt = LinearCursor(
            since=cursor.since, after=after, pending=high, recent=_trim(recent, None)
        )
    walk = Walk(list(found), nxt.dump, None if error is None else str(error))
    return settle(instance, NAME, walk, log)


linear_tickets = intake_sensor(
    name=LinearCursor.SENSOR,
    source=NAME,
    tick=polled(poll_linear),
    interval_s=LINEAR_POLL_INTERVAL_S,
    default_status=sensor_default_status(),
    description="Linear issues assigned/delegated to the bot or labelled for it -> ticket runs.",
)
