"""Turn a partition key into a ``Ticket``: Linear issue or Slack thread, validated at the edge.

The sensors only decide *which* keys exist; the ``ticket`` asset calls ``fetch_ticket`` so the
full payload is read in the run, where a failure is retried and recorded, not in the sensor. The
clients are Protocols here so the domain never imports httpx.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from veranda_dagster.domain.bounds import MAX_SLACK_BLOCK_DEPTH, MAX_SLACK_THREAD_MESSAGES
from veranda_dagster.domain.errors import ConfigError, InputError
from veranda_dagster.domain.models import Attachment, Ticket
from veranda_dagster.domain.ticket_bounds import bound_ticket
from veranda_dagster.domain.ticket_key import LINEAR_KEY as LINEAR_KEY_GRAMMAR
from veranda_dagster.domain.ticket_key import require_ticket_key
from veranda_dagster.domain.ticket_source import TicketSource

_LINEAR_KEY = LINEAR_KEY_GRAMMAR
LINEAR_KEY_IN_TEXT = re.compile(r"(?<![A-Za-z0-9-])([A-Z][A-Z0-9]{0,9}-\d{1,9})(?![A-Za-z0-9-])")
"""A Linear identifier mentioned in prose (``ENG-123``)."""

_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^<>]*)?>")
"""A label never holds a raw ``<`` (Slack escapes it), so an unclosed one ends at the next
mention instead of being rescanned to the end of the text from every ``<@``."""


class LinearIssues(Protocol):
    def get_issue(self, identifier: str) -> dict[str, Any]: ...


class SlackThreads(Protocol):
    @property
    def bot_user_id(self) -> str: ...

    def replies(self, channel: str, ts: str) -> list[dict[str, Any]]: ...


def _field(node: dict[str, Any], name: str, source: str) -> str:
    value = node.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{source} payload: field {name!r} is missing or not a string")
    return value


def _nodes(node: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """``labels{nodes{...}}`` connections; a missing connection is empty, a bad one an error."""
    conn = node.get(name)
    if conn is None:
        return []
    items = conn.get("nodes") if isinstance(conn, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise InputError(f"linear payload: field '{name}.nodes' is not a list of objects")
    return items


def ticket_from_linear(node: dict[str, Any]) -> Ticket:
    """A Linear issue node (PollIssues/GetIssue shape) as a Ticket keyed by its identifier."""
    if not isinstance(node, dict):
        raise InputError("linear payload: issue is not an object")
    identifier = _field(node, "identifier", "linear")
    if not _LINEAR_KEY.fullmatch(identifier):
        raise InputError(f"linear payload: field 'identifier' {identifier!r} is not like ENG-123")
    labels = [str(n["name"]) for n in _nodes(node, "labels") if n.get("name")]
    attachments = [
        Attachment(url=str(n["url"]), title=n.get("title"))
        for n in _nodes(node, "attachments")
        if n.get("url")
    ]
    description = node.get("description") or ""
    if not isinstance(description, str):
        raise InputError("linear payload: field 'description' is not a string")
    return Ticket(
        id=identifier,
        source="linear",
        title=_field(node, "title", "linear"),
        description=description,
        labels=labels,
        attachments=attachments,
        url=node.get("url") if isinstance(node.get("url"), str) else None,
        external_id=_field(node, "id", "linear"),
        updated_at=node.get("updatedAt") if isinstance(node.get("updatedAt"), str) else None,
    )


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
    ts = _field(message, "ts", "slack")
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
        id=f"slack-{channel}-{thread_ts}",  # partitions.slack_key; domain cannot import dagster
        source="slack",
        title=lines[0][:200],
        description=description,
        external_id=channel,
        thread_ts=thread_ts,
        url=message.get("permalink") if isinstance(message.get("permalink"), str) else None,
    )


def _keyed(ticket: Ticket, key: str) -> Ticket:
    """The ticket as read, under the key it was asked for: the id names folders and branches,
    so a payload naming another thread (a hostile server's ``thread_ts``) is refused."""
    if ticket.id != key:
        raise InputError(f"ticket {key}: the source answered with another ticket {ticket.id!r}")
    return bound_ticket(ticket)


def fetch_ticket(
    key: str,
    linear: LinearIssues | None,
    slack: SlackThreads | None,
    sources: Sequence[TicketSource] = (),
) -> Ticket:
    """Read the ticket behind a partition key (a key in the one grammar) from its source (a
    ported ``sources`` entry owns its source-qualified keys)."""
    require_ticket_key(key)
    for source in sources:
        if source.owns(key):
            return _keyed(source.fetch(key), key)
    if key.startswith("slack-"):
        if slack is None:
            raise ConfigError(f"ticket {key}: Slack is not configured (set SLACK_BOT_TOKEN)")
        try:
            _, channel, ts = key.split("-", 2)
        except ValueError:
            raise InputError(f"ticket key {key!r} is not slack-<channel>-<ts>") from None
        thread = slack.replies(channel, ts)
        if not thread:
            raise InputError(f"slack thread {key}: 'messages' is empty")
        root, rest = thread[0], thread[1:]
        found = ticket_from_slack(channel, root, bot_user_id=slack.bot_user_id, replies=rest)
        return _keyed(found, key)
    if _LINEAR_KEY.fullmatch(key):
        if linear is None:
            raise ConfigError(f"ticket {key}: Linear is not configured (set LINEAR_API_KEY)")
        return _keyed(ticket_from_linear(linear.get_issue(key)), key)
    raise InputError(f"ticket key {key!r} is neither a Linear identifier nor slack-<channel>-<ts>")
