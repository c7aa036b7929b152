"""Where the agent talks back to a person: a Linear comment or a reply in the Slack thread.

A run that is retried (or resumed in a new pod) re-executes its posting step, so ``post`` is
idempotent: each message carries a hidden marker derived from the ticket and the text (or a
caller's key), and the thread is read before posting. Linear gets an HTML comment in the
Markdown body; Slack gets message ``metadata``, which people never see.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from veranda_dagster.clients.linear import LinearClient
from veranda_dagster.clients.slack import SlackClient
from veranda_dagster.domain.errors import ConfigError, InputError
from veranda_dagster.domain.models import Ticket
from veranda_dagster.domain.ticket_source import TicketSource

SLACK_EVENT_TYPE = "veranda_post"


def post_marker(ticket: Ticket, text: str, key: str | None = None) -> str:
    digest = hashlib.sha256(f"{ticket.id}\n{key or text}".encode()).hexdigest()[:16]
    return f"veranda:{digest}"


class TicketChannel:
    """Post to the ticket's own channel; returns the comment id / message ts."""

    def __init__(
        self,
        linear: LinearClient | None,
        slack: SlackClient | None,
        sources: Sequence[TicketSource] = (),
    ) -> None:
        self.linear = linear
        self.slack = slack
        self.sources = {s.name: s for s in sources}
        """Ported sources (``domain.ticket_source``), by the ``Ticket.source`` they own."""

    def post(self, ticket: Ticket, text: str, *, key: str | None = None) -> str | None:
        """Post ``text`` once per (ticket, ``key`` or text); a repeat returns the first id."""
        marker = post_marker(ticket, text, key)
        if ticket.source in self.sources:
            return self.sources[ticket.source].post(ticket, text, marker)
        if ticket.source not in ("linear", "slack"):
            raise ConfigError(f"ticket {ticket.id}: source {ticket.source!r} is not configured")
        if ticket.source == "linear":
            return self._post_linear(ticket, text, marker)
        return self._post_slack(ticket, text, marker)

    def _post_linear(self, ticket: Ticket, text: str, marker: str) -> str:
        if self.linear is None:
            raise ConfigError(f"ticket {ticket.id}: Linear is not configured (set LINEAR_API_KEY)")
        issue_id = ticket.external_id or str(self.linear.get_issue(ticket.id).get("id") or "")
        if not issue_id:
            raise InputError(f"ticket {ticket.id}: no Linear issue id to comment on")
        tag = f"<!-- {marker} -->"
        for comment in self.linear.comments(issue_id):
            if tag in str(comment.get("body") or ""):
                return str(comment["id"])
        return self.linear.comment_create(issue_id, f"{text}\n\n{tag}")

    def _post_slack(self, ticket: Ticket, text: str, marker: str) -> str:
        if self.slack is None:
            raise ConfigError(f"ticket {ticket.id}: Slack is not configured (set SLACK_BOT_TOKEN)")
        if not ticket.external_id or not ticket.thread_ts:
            raise InputError(f"ticket {ticket.id}: field 'external_id'/'thread_ts' is missing")
        for message in self.slack.replies(ticket.external_id, ticket.thread_ts):
            if _slack_marker(message) == marker:
                return str(message["ts"])
        metadata = {"event_type": SLACK_EVENT_TYPE, "event_payload": {"marker": marker}}
        return self.slack.post_message(
            ticket.external_id, text, ticket.thread_ts, metadata=metadata
        )


def _slack_marker(message: dict[str, Any]) -> str | None:
    meta = message.get("metadata")
    if not isinstance(meta, dict) or meta.get("event_type") != SLACK_EVENT_TYPE:
        return None
    payload = meta.get("event_payload")
    return payload.get("marker") if isinstance(payload, dict) else None
