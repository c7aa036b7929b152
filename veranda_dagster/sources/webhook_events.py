"""A verified webhook payload -> the ticket it asks for, or why it asks for none.

The push path is an accelerator of the poll, never a second, looser intake: an event becomes a
ticket only when it shows, in its own payload, what the source's poll filters on (Linear: an
open issue assigned or delegated to the bot, or carrying the label; Jira: an issue with the
label or the assignee, in the project when one is set; Slack: a human's ``app_mention``). An
event that cannot show it (a bot id not configured, a payload without labels) is **left to the
poll**, which asks the source itself within ``LINEAR_POLL_INTERVAL_S``. Every field is read as
hostile input: a wrong type is "ignored", never an exception past this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from veranda_dagster.domain.core.ticket_key import is_ticket_key
from veranda_dagster.sources.webhook_auth import WebhookMalformed

LINEAR_ACTIONS = frozenset({"create", "update"})
"""Linear entity actions that may make an issue new work (``remove`` never does)."""
LINEAR_CLOSED_STATES = frozenset({"completed", "canceled"})
"""Workflow state types the poll leaves out (its filter's ``state.type nin``)."""
JIRA_EVENTS = frozenset({"jira:issue_created", "jira:issue_updated"})
"""Jira webhook events that may make an issue new work."""
MAX_DELIVERY_ID_CHARS = 200
"""A delivery id longer than this is not remembered (nor trusted as one)."""


@dataclass(frozen=True)
class PushEvent:
    """What one verified webhook asks for."""

    key: str | None
    """The ticket's partition key, or ``None`` when the event is no new work."""
    reason: str = ""
    """Why there is no key (logged and answered), empty when there is one."""
    delivery: str | None = None
    """The source's id of this delivery, to answer a redelivery without asking the instance."""
    mentions: tuple[str, ...] = ()
    """Ticket keys the event's text names (Slack): a mention of a ticket that already has a run
    is no new ticket, as in the Slack sensor."""
    reply: Mapping[str, Any] = field(default_factory=dict)
    """A body the source expects back (Slack's ``url_verification`` challenge)."""


@dataclass(frozen=True)
class Scope:
    """What the poll of each source filters on, from the same settings the resources read."""

    linear_bot_user_id: str | None = None
    linear_label: str | None = "veranda"
    jira_label: str | None = "veranda"
    jira_assignee: str | None = None
    jira_project: str | None = None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _delivery(value: Any) -> str | None:
    text = _str(value)
    return text if text and len(text) <= MAX_DELIVERY_ID_CHARS else None


def _names(items: Any) -> set[str]:
    """Lower-cased names of a list of ``{"name": ...}`` objects or of strings."""
    if not isinstance(items, list):
        return set()
    names = (i.get("name") if isinstance(i, dict) else i for i in items)
    return {n.lower() for n in names if isinstance(n, str)}


def linear_event(payload: Any, headers: Mapping[str, str], scope: Scope) -> PushEvent:
    """A Linear entity webhook (``type`` ``Issue``) -> its issue's key when it is the bot's."""
    body = _dict(payload)
    delivery = _delivery(headers.get("linear-delivery")) or _delivery(body.get("webhookId"))
    if body.get("type") != "Issue" or body.get("action") not in LINEAR_ACTIONS:
        return PushEvent(None, "not an issue created or updated", delivery)
    data = _dict(body.get("data"))
    key = data.get("identifier")
    if not is_ticket_key(key):
        return PushEvent(None, "the issue has no valid identifier", delivery)
    if _dict(data.get("state")).get("type") in LINEAR_CLOSED_STATES:
        return PushEvent(None, f"{key} is closed", delivery)
    bot = scope.linear_bot_user_id
    ours = bool(bot) and bot in (data.get("assigneeId"), data.get("delegateId"))
    labelled = bool(scope.linear_label) and (scope.linear_label or "").lower() in _names(
        data.get("labels")
    )
    if not (ours or labelled):
        return PushEvent(
            None,
            f"{key} is not assigned, delegated or labelled for the bot "
            "in this event; left to the poll",
            delivery,
        )
    return PushEvent(str(key), delivery=delivery)


def slack_event(payload: Any, headers: Mapping[str, str], scope: Scope) -> PushEvent:
    """A Slack Events API request -> the mentioned thread's key, or the challenge to echo."""
    from veranda_dagster.sources.registry import keys_mentioned
    from veranda_dagster.sources.slack.ticket import thread_key

    body = _dict(payload)
    if body.get("type") == "url_verification":
        challenge = _str(body.get("challenge"))
        if challenge is None or len(challenge) > MAX_DELIVERY_ID_CHARS:
            raise WebhookMalformed("url_verification without a usable challenge")
        return PushEvent(None, "url_verification", reply={"challenge": challenge})
    delivery = _delivery(body.get("event_id"))
    event = _dict(body.get("event"))
    if body.get("type") != "event_callback" or event.get("type") != "app_mention":
        return PushEvent(None, "not an app_mention", delivery)
    if event.get("bot_id") or event.get("subtype"):
        return PushEvent(None, "a bot's or an edited message", delivery)
    channel, ts = _str(event.get("channel")), _str(event.get("thread_ts") or event.get("ts"))
    if channel is None or ts is None:
        return PushEvent(None, "the mention has no channel or ts", delivery)
    key = thread_key(channel, ts)
    if not is_ticket_key(key):
        return PushEvent(None, "the mention's thread is not a valid key", delivery)
    text = event.get("text")
    mentions = tuple(keys_mentioned(text)) if isinstance(text, str) else ()
    return PushEvent(key, delivery=delivery, mentions=mentions)


def jira_event(payload: Any, headers: Mapping[str, str], scope: Scope) -> PushEvent:
    """A Jira issue webhook -> the issue's key when it carries the label or the assignee."""
    from veranda_dagster.sources.jira.ticket import partition_key

    body = _dict(payload)
    delivery = _delivery(headers.get("x-atlassian-webhook-identifier"))
    if body.get("webhookEvent") not in JIRA_EVENTS:
        return PushEvent(None, "not an issue created or updated", delivery)
    issue = _dict(body.get("issue"))
    issue_key, fields = _str(issue.get("key")), _dict(issue.get("fields"))
    key = partition_key(issue_key) if issue_key else None
    if key is None or not is_ticket_key(key):
        return PushEvent(None, "the issue has no valid key", delivery)
    project = _dict(fields.get("project")).get("key")
    if scope.jira_project and project != scope.jira_project:
        return PushEvent(None, f"{key} is outside project {scope.jira_project}", delivery)
    if _dict(_dict(fields.get("status")).get("statusCategory")).get("key") == "done":
        return PushEvent(None, f"{key} is done", delivery)
    labelled = bool(scope.jira_label) and (scope.jira_label or "").lower() in _names(
        fields.get("labels")
    )
    assignee = _dict(fields.get("assignee"))
    assigned = bool(scope.jira_assignee) and scope.jira_assignee in (
        assignee.get("accountId"),
        assignee.get("name"),
        assignee.get("emailAddress"),
    )
    if not (labelled or assigned):
        return PushEvent(
            None, f"{key} has neither the label nor the assignee; left to the poll", delivery
        )
    return PushEvent(key, delivery=delivery)


EVENTS = {"linear": linear_event, "slack": slack_event, "jira": jira_event}
"""Source name -> how its verified payload reads as a ``PushEvent``."""
