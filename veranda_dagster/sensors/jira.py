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

- **dedup across restarts** is asked of the Dagster instance (``dedup.new_tickets``), never of
  process memory;
- **our own comments are not new work**: posting the ticket comment, the fallback notice or the
  failed-run note bumps the issue's ``updated``. For a ticket that already had a partition (a
  run that failed before materializing anything holds nothing), an update whose stamp is that
  of our own newest comment is ignored, or the failed-run note would relaunch the run that wrote
  it, forever.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import dagster as dg
from pydantic import BaseModel, Field, ValidationError

from veranda_dagster.clients._http import HttpAuthError, HttpStatusError
from veranda_dagster.clients.jira import JiraClient
from veranda_dagster.clients.jira_ticket import PREFIX
from veranda_dagster.domain.bounds import MAX_CURSOR_RECENT
from veranda_dagster.domain.errors import InputError, TransientError
from veranda_dagster.partitions import TICKET_JOB, is_ticket_key
from veranda_dagster.resources.jira import JiraResource
from veranda_dagster.resources.tickets import JIRA_INTAKE_ENV, enabled_sources
from veranda_dagster.sensors.dedup import sensor_result, ticket_holds

POLL_INTERVAL_S = 60
"""Seconds between Jira polls: one search per minute is far inside Jira Cloud's cost budget."""

OWN_COMMENT_SLACK_S = 5.0
"""How close our newest comment's stamp must be to the issue's ``updated`` for that update to
count as ours (Jira stamps both from the same write; a person's edit is seconds apart or more)."""

OVERLAP_MINUTES = 1
"""Extra minutes asked for beyond the high-water mark: JQL compares at minute precision."""

ENABLE_ENV = JIRA_INTAKE_ENV


def jira_partition_key(issue_key: str) -> str:
    """A source-qualified partition key (``jira-PAY-17``): a Jira ``PAY-17`` and a Linear
    ``PAY-17`` are different tickets and must never share a partition."""
    return PREFIX + issue_key


class JiraCursor(BaseModel):
    since: str | None = None
    """ISO UTC stamp of the newest ``updated`` seen; the next search starts a minute before."""
    recent: dict[str, str] = Field(default_factory=dict)
    """issue key -> ``updated`` already handled, to skip the overlap cheaply."""
    bot: str | None = None
    """Our own account id (``accountId`` / user name), read once from ``/myself``."""

    @classmethod
    def parse(cls, raw: str | None) -> JiraCursor:
        if not raw:
            return cls()
        try:
            return cls.model_validate(json.loads(raw))
        except (ValueError, ValidationError):
            raise InputError("jira_tickets: the stored cursor is not valid JSON") from None

    def dump(self) -> str:
        return json.dumps(self.model_dump(), sort_keys=True)


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
    """Whether the issue's last update is our own newest comment."""
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
    found: dict[str, datetime] = {}
    high = parse_stamp(cursor.since) if cursor.since else None
    error: Exception | None = None
    try:
        for page in client.iter_issue_pages(relative_since(cursor.since, now())):
            for issue in page:
                updated = parse_stamp(issue.updated)
                if not is_ticket_key(jira_partition_key(issue.key)) or updated is None:
                    log.warning(f"jira_tickets: skipped {issue.key!r}: bad key or 'updated'")
                    continue
                high = max(high or updated, updated)
                if cursor.recent.get(issue.key) != issue.updated:
                    found.setdefault(issue.key, updated)
                    cursor.recent[issue.key] = issue.updated
    except (TransientError, InputError, HttpStatusError) as exc:
        error = exc
    keys: list[str] = []
    wanted = [jira_partition_key(k) for k in found]
    holds = ticket_holds(instance, wanted, registered=True)  # taken, and seen at all
    for pk in (k for k in wanted if k not in holds.taken):
        issue_key = pk.removeprefix(PREFIX)
        held_before = pk in holds.known
        if held_before and _ours(client, cursor, issue_key, found[issue_key]):
            log.info(f"jira_tickets: {issue_key} changed only by our own comment; not new work")
            continue
        keys.append(pk)
    if error is not None:
        log.warning(f"jira_tickets: {error}; cursor kept, {len(keys)} new ticket(s) requested")
        old = JiraCursor.parse(raw_cursor).model_copy(update={"bot": cursor.bot})
        if not keys:
            return dg.SkipReason(f"Jira poll failed ({error}); cursor kept, retrying next tick")
        return sensor_result(keys, old.dump())
    since = high.isoformat(timespec="milliseconds") if high else cursor.since
    newest = sorted(cursor.recent.items(), key=lambda kv: kv[1], reverse=True)[:MAX_CURSOR_RECENT]
    nxt = JiraCursor(since=since, recent=dict(newest), bot=cursor.bot)
    return sensor_result(keys, nxt.dump())


@dg.sensor(
    name="jira_tickets",
    job_name=TICKET_JOB,
    minimum_interval_seconds=POLL_INTERVAL_S,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Jira issues labelled for the bot or assigned to it -> ticket runs (jira-KEY).",
)
def jira_tickets(
    context: dg.SensorEvaluationContext, jira: JiraResource
) -> dg.SensorResult | dg.SkipReason:
    if not jira.configured:
        return dg.SkipReason("Jira is not configured: set JIRA_BASE_URL and JIRA_API_TOKEN")
    client = jira.client()
    try:
        return poll_jira(context.instance, client, context.cursor, context.log)
    except HttpAuthError as exc:
        raise HttpAuthError(f"{exc}; check JIRA_API_TOKEN (and JIRA_EMAIL on Cloud)") from None
    finally:
        client.close()


def jira_intake(environ: Mapping[str, str] | None = None) -> list[dg.SensorDefinition]:
    """The Jira sensors to add to the Definitions: none unless ``jira`` is an enabled source
    (``VERANDA_SOURCES``, or the older ``VERANDA_JIRA_INTAKE=1``), so a deployment that never
    asked for Jira sees no change at all. Its ``jira`` resource is bound either way."""
    return [jira_tickets] if "jira" in enabled_sources(environ) else []
