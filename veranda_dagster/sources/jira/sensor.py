"""The ``jira_tickets`` sensor: Jira issues with the bot's label or assignee become ticket runs.

Off by default: it is part of the code location only when ``jira`` is an enabled source
(``VERANDA_SOURCES=linear,slack,jira``, or the older ``VERANDA_JIRA_INTAKE=1``), and then skips
with a reason until ``JIRA_BASE_URL`` and a token are set. The ``ticket`` phase reads its
``jira-`` keys through the same ``JiraResource`` (``resources.tickets``).

Each tick asks Jira for matching open issues updated since the cursor's high-water mark. The
mark is sent as a *relative* JQL date (``updated >= "-37m"``): JQL reads an absolute date in
the searching account's own time zone, which the product cannot know, while "minutes ago" means
the same everywhere. The search is ordered by ``updated``, so a walk cut by the page bound
resumes from the highest stamp it saw; the minute precision of JQL dates gives an overlap that
the cursor's ``recent`` map absorbs. Two guards keep runs single:

- **dedup across restarts** is asked of the Dagster instance (``intake.settle``), never of
  process memory;
- **our own comments are not new work**: posting the ticket comment, the fallback notice or the
  failed-run note bumps the issue's ``updated``. For a ticket that already had a partition (a
  run that failed before materializing anything holds nothing), an update whose stamp is that
  of our own newest comment is ignored, or the failed-run note would relaunch the run that wrote
  it, forever.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import dagster as dg
from pydantic import Field

from veranda_dagster.domain.core.bounds import MAX_CURSOR_RECENT
from veranda_dagster.domain.core.errors import InputError, TransientError
from veranda_dagster.http.client import HttpStatusError
from veranda_dagster.partitions import is_ticket_key
from veranda_dagster.sources.dedup import TicketHolds
from veranda_dagster.sources.intake import JsonCursor, Walk, intake_sensor, polled, settle
from veranda_dagster.sources.jira.client import JiraClient
from veranda_dagster.sources.jira.ticket import NAME, partition_key

POLL_INTERVAL_S = 60
"""Seconds between Jira polls: one search per minute is far inside Jira Cloud's cost budget."""

OWN_COMMENT_SLACK_S = 5.0
"""How close our newest comment's stamp must be to the issue's ``updated`` for that update to
count as ours (Jira stamps both from the same write; a person's edit is seconds apart or more)."""

OVERLAP_MINUTES = 1
"""Extra minutes asked for beyond the high-water mark: JQL compares at minute precision."""


class JiraCursor(JsonCursor):
    SENSOR = "jira_tickets"

    since: str | None = None
    """ISO UTC stamp of the newest ``updated`` seen; the next search starts a minute before."""
    recent: dict[str, str] = Field(default_factory=dict)
    """issue key -> ``updated`` already handled, to skip the overlap cheaply."""
    bot: str | None = None
    """Our own account id (``accountId`` / user name), read once from ``/myself``."""


def parse_stamp(value: str) -> datetime | None:
    """Jira's ``2026-12-02T17:04:11.204+0000`` (also ``Z`` and ``+00:00``) as aware UTC."""
    for fmt in ("%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return datetime.strptime(value.replace("Z", "+0000"), fmt).astimezone(UTC)
        except ValueError:
            continue
    return None


def relative_since(since: str | None, now: datetime) -> str | None:
    """``since`` as a JQL relative date (``-37m``), with ``OVERLAP_MINUTES`` more."""
    moment = parse_stamp(since) if since else None
    if moment is None:
        return None
    minutes = max(0, math.ceil((now - moment).total_seconds() / 60)) + OVERLAP_MINUTES
    return f"-{minutes}m"


def _ours(client: JiraClient, cursor: JiraCursor, key: str, updated: datetime) -> bool:
    """Whether the issue's last update is our own newest comment (learning our account id
    into ``cursor`` the first time it is needed)."""
    if cursor.bot is None:
        me = client.myself()
        cursor.bot = str(me.get("accountId") or me.get("name") or me.get("key") or "")
    comments = client.comments(key)
    if not comments or not cursor.bot or comments[-1].author_id != cursor.bot:
        return False
    stamp = parse_stamp(comments[-1].updated)
    return stamp is not None and abs((updated - stamp).total_seconds()) <= OWN_COMMENT_SLACK_S


def poll_jira(
    instance: dg.DagsterInstance,
    client: JiraClient,
    raw_cursor: str | None,
    log: Any,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> dg.SensorResult | dg.SkipReason:
    """One tick's work, separated from the decorator so it reads (and tests) as a function."""
    cursor = JiraCursor.parse(raw_cursor)
    found: dict[str, tuple[str, datetime]] = {}  # partition key -> (issue key, its updated)
    high = parse_stamp(cursor.since) if cursor.since else None
    error: Exception | None = None
    try:
        for page in client.iter_issue_pages(relative_since(cursor.since, now())):
            for issue in page:
                updated = parse_stamp(issue.updated)
                if not is_ticket_key(partition_key(issue.key)) or updated is None:
                    log.warning(f"jira_tickets: skipped {issue.key!r}: bad key or 'updated'")
                    continue
                high = max(high or updated, updated)
                if cursor.recent.get(issue.key) != issue.updated:
                    found.setdefault(partition_key(issue.key), (issue.key, updated))
                    cursor.recent[issue.key] = issue.updated
    except (TransientError, InputError, HttpStatusError) as exc:
        error = exc
    if error is not None:
        nxt = JiraCursor.parse(raw_cursor).model_copy(update={"bot": cursor.bot})
    else:
        since = high.isoformat(timespec="milliseconds") if high else cursor.since
        recent = sorted(cursor.recent.items(), key=lambda kv: kv[1], reverse=True)
        nxt = JiraCursor(since=since, recent=dict(recent[:MAX_CURSOR_RECENT]), bot=cursor.bot)

    def changed_only_by_us(key: str, holds: TicketHolds) -> str | None:
        """A ticket seen before (a run that failed before materializing holds nothing) whose
        last update is our own comment (the failed-run note) is not new work."""
        issue_key, updated = found[key]
        if key in holds.known and _ours(client, nxt, issue_key, updated):
            return f"{issue_key} changed only by our own comment; not new work"
        return None

    walk = Walk(list(found), nxt.dump, None if error is None else str(error))
    return settle(instance, NAME, walk, log, drop=changed_only_by_us)


jira_tickets = intake_sensor(
    name=JiraCursor.SENSOR,
    source=NAME,
    tick=polled(poll_jira),
    interval_s=POLL_INTERVAL_S,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Jira issues labelled for the bot or assigned to it -> ticket runs (jira-KEY).",
)
