"""Slack as a ported ticket source (``domain.core.ticket_source.TicketSource``).

A thread is a ticket: its key is ``slack-<channel>-<thread ts>``, its title the root message's
first line with the bot's mention removed, its description the rest plus the replies. Posting
replies in the thread with the dedup marker in message ``metadata``, which people never see, and
reads the thread for it first. This module is the one home of that key grammar (``KEYS``):
the sensor builds keys with ``thread_key`` and a failed run's note reads them with ``address``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.ticket_source import KeyGrammar, SourcePort
from veranda_dagster.sources.slack.limits import MAX_SLACK_BLOCK_DEPTH, MAX_SLACK_THREAD_MESSAGES

NAME = "slack"
PREFIX = NAME + "-"

KEY = re.compile(r"slack-[A-Z0-9]{5,20}-[0-9]{6,12}\.[0-9]{1,9}")
"""The keys Slack owns: ``slack-<channel id>-<thread ts>``."""

EVENT_TYPE = "veranda_post"
"""The ``metadata.event_type`` of the agent's own posts; the marker rides in its payload."""

_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^<>]*)?>")
"""A label never holds a raw ``<`` (Slack escapes it), so an unclosed one ends at the next
mention instead of being rescanned to the end of the text from every ``<@``."""


class SlackThreads(Protocol):
    """What the source needs from ``client.SlackClient``."""

    @property
    def bot_user_id(self) -> str: ...

    def replies(self, channel: str, ts: str) -> list[dict[str, Any]]: ...

    def post_message(
        self,
        channel: str,
        text: str,
        thread_ts: str | None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> str: ...


def thread_key(channel: str, ts: str) -> str:
    return f"{PREFIX}{channel}-{ts}"


def parse_thread_key(key: str) -> tuple[str, str]:
    """``slack-C123-1712.0001`` -> (``C123``, ``1712.0001``)."""
    try:
        _, channel, ts = key.split("-", 2)
    except ValueError:
        raise InputError(f"ticket key {key!r} is not slack-<channel>-<ts>") from None
    return channel, ts


def owns(key: str) -> bool:
    return key.startswith(PREFIX)


def address(key: str) -> Ticket:
    """The thread a key names: its channel and root timestamp are all a reply needs."""
    channel, ts = parse_thread_key(key)
    return Ticket(id=key, source=NAME, title=key, external_id=channel, thread_ts=ts)


KEYS = KeyGrammar(example="slack-C0ACME001-1712345670.000200", owns=owns, address=address)


def _field(node: dict[str, Any], name: str) -> str:
    value = node.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"slack payload: field {name!r} is missing or not a string")
    return value


def mentions(message: dict[str, Any], user_id: str) -> bool:
    """Whether a Slack message mentions ``user_id`` (text token or rich_text user element)."""
    text = message.get("text")
    if isinstance(text, str) and any(m == user_id for m in _MENTION.findall(text)):
        return True
    return user_id in _block_user_ids(message.get("blocks"))


def _block_user_ids(blocks: Any, depth: int = 0) -> set[str]:
    found: set[str] = set()
    if depth > MAX_SLACK_BLOCK_DEPTH or not isinstance(blocks, list):
        return found
    for block in blocks:
        if isinstance(block, dict):
            if block.get("type") == "user" and isinstance(block.get("user_id"), str):
                found.add(block["user_id"])
            found |= _block_user_ids(block.get("elements"), depth + 1)
    return found


def strip_mentions(text: str, user_id: str | None) -> str:
    """Remove the bot's mention token(s); other people's mentions stay as written."""
    if user_id:
        text = re.sub(rf"<@{re.escape(user_id)}(?:\|[^<>]*)?>\s*", "", text)
    return text.strip()


def ticket_from_slack(
    channel: str,
    message: dict[str, Any],
    *,
    bot_user_id: str | None = None,
    replies: Sequence[dict[str, Any]] = (),
) -> Ticket:
    """A Slack thread root as a Ticket: title = first line, mention stripped, key by thread."""
    if not isinstance(message, dict):
        raise InputError("slack payload: message is not an object")
    ts = _field(message, "ts")
    thread_ts = message.get("thread_ts") or ts
    if not isinstance(thread_ts, str):
        raise InputError("slack payload: field 'thread_ts' is not a string")
    raw = message.get("text")
    if not isinstance(raw, str):
        raise InputError("slack payload: field 'text' is missing or not a string")
    text = strip_mentions(raw, bot_user_id)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise InputError("slack payload: field 'text' is empty once the mention is removed")
    extra = [
        strip_mentions(str(r.get("text") or ""), bot_user_id)
        for r in list(replies)[:MAX_SLACK_THREAD_MESSAGES]
        if isinstance(r, dict) and r.get("ts") != ts and r.get("text")
    ]
    description = "\n".join(lines[1:] + [e for e in extra if e])
    return Ticket(
        id=thread_key(channel, thread_ts),
        source=NAME,
        title=lines[0][:200],
        description=description,
        external_id=channel,
        thread_ts=thread_ts,
        url=message.get("permalink") if isinstance(message.get("permalink"), str) else None,
    )


def post_marker_of(message: dict[str, Any]) -> str | None:
    """The dedup marker an agent post carries in its metadata, if ``message`` is one."""
    meta = message.get("metadata")
    if not isinstance(meta, dict) or meta.get("event_type") != EVENT_TYPE:
        return None
    payload = meta.get("event_payload")
    return payload.get("marker") if isinstance(payload, dict) else None


class SlackTicketSource(SourcePort[SlackThreads]):
    name = NAME
    keys = KEYS

    def fetch(self, key: str) -> Ticket:
        channel, ts = parse_thread_key(key)
        thread = self.client.replies(channel, ts)
        if not thread:
            raise InputError(f"slack thread {key}: 'messages' is empty")
        root, rest = thread[0], thread[1:]
        return ticket_from_slack(channel, root, bot_user_id=self.client.bot_user_id, replies=rest)

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        if not ticket.external_id or not ticket.thread_ts:
            raise InputError(f"ticket {ticket.id}: field 'external_id'/'thread_ts' is missing")
        own = self.client.bot_user_id
        for message in self.client.replies(ticket.external_id, ticket.thread_ts):
            if post_marker_of(message) == marker and message.get("user") == own:
                return str(message["ts"])  # ours by author: another app can send metadata
        metadata = {"event_type": EVENT_TYPE, "event_payload": {"marker": marker}}
        return self.client.post_message(
            ticket.external_id, text, ticket.thread_ts, metadata=metadata
        )
