"""The ``slack_mentions`` sensor: a mention of the bot in a configured channel becomes a ticket.

Slack is polled, not pushed (no Ingress): per channel, ``conversations.history`` newer than the
channel's ``oldest`` mark, newest first, paged up to a bound; threads that started in the window
are opened with ``conversations.replies`` to find mentions in replies. The key is the thread
root (``slack-<channel>-<thread_ts>``), so an edited message or a second mention in the same
thread is the same ticket. A mention whose text names a ticket already in flight (a key that a
source reads in prose, ``ENG-123``) is that ticket, not a new one. Per-channel marks move only
when the channel's walk completes; a channel that errors keeps its mark while the others
advance.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import dagster as dg
from pydantic import BaseModel, Field

from veranda_dagster.domain.core.errors import InputError, TransientError
from veranda_dagster.partitions import is_ticket_key
from veranda_dagster.sources import registry
from veranda_dagster.sources.dedup import TicketHolds
from veranda_dagster.sources.intake import JsonCursor, Walk, intake_sensor, settle
from veranda_dagster.sources.sensor_status import sensor_default_status
from veranda_dagster.sources.slack.client import SlackApiError, SlackClient
from veranda_dagster.sources.slack.limits import (
    MAX_SLACK_CHANNELS,
    MAX_SLACK_THREADS_PER_TICK,
    SLACK_POLL_INTERVAL_S,
)
from veranda_dagster.sources.slack.resource import SlackResource
from veranda_dagster.sources.slack.ticket import NAME, mentions, thread_key

INITIAL_LOOKBACK_S = 3600
"""A channel seen for the first time is read back one hour, not to the beginning of time."""

_IGNORED_SUBTYPES = frozenset(
    {"bot_message", "channel_join", "channel_leave", "message_deleted", "message_changed"}
)


class ChannelCursor(BaseModel):
    oldest: str | None = None
    """Messages with ``ts`` after this are new."""
    page: str | None = None
    """History page cursor of a walk cut by the page bound."""
    pending: str | None = None
    """Newest ``ts`` of the unfinished walk; becomes ``oldest`` when it completes."""


class SlackCursor(JsonCursor):
    SENSOR = "slack_mentions"

    channels: dict[str, ChannelCursor] = Field(default_factory=dict)


def _ts(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return -1.0


def _is_human(message: dict[str, Any], bot: str) -> bool:
    return (
        message.get("subtype") not in _IGNORED_SUBTYPES
        and not message.get("bot_id")
        and message.get("user") != bot
    )


def _walk_channel(
    client: SlackClient, channel: str, cc: ChannelCursor, bot: str
) -> tuple[dict[str, dict[str, Any]], ChannelCursor]:
    """Mentions in one channel since its mark -> ({thread key: message}, next channel cursor)."""
    found: dict[str, dict[str, Any]] = {}
    threads: list[str] = []
    high, page = cc.pending, cc.page
    complete = False
    for messages, nxt in client.iter_history(channel, cc.oldest, cc.page):
        for message in messages:
            ts = message.get("ts")
            if _ts(ts) < 0:
                continue
            if high is None or _ts(ts) > _ts(high):
                high = ts
            if not _is_human(message, bot):
                continue
            root = str(message.get("thread_ts") or ts)
            if mentions(message, bot):
                found.setdefault(thread_key(channel, root), message)
            elif message.get("reply_count") and root == ts:
                threads.append(root)
        page, complete = nxt, nxt is None
    for root in threads[:MAX_SLACK_THREADS_PER_TICK]:
        for reply in client.replies(channel, root)[1:]:
            if _is_human(reply, bot) and mentions(reply, bot):
                found.setdefault(thread_key(channel, root), reply)
                break
    if complete:
        return found, ChannelCursor(oldest=high or cc.oldest)
    return found, ChannelCursor(oldest=cc.oldest, page=page, pending=high)


def poll_slack(
    instance: dg.DagsterInstance,
    client: SlackClient,
    channels: list[str],
    raw_cursor: str | None,
    log: Any,
    now: Callable[[], float] = time.time,
) -> dg.SensorResult | dg.SkipReason:
    """One tick across the configured channels; see the module docstring for the rules."""
    cursor = SlackCursor.parse(raw_cursor)
    bot = client.bot_user_id
    found: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    for channel in channels[:MAX_SLACK_CHANNELS]:
        start = f"{now() - INITIAL_LOOKBACK_S:.6f}"
        cc = cursor.channels.get(channel) or ChannelCursor(oldest=start)
        try:
            hits, nxt = _walk_channel(client, channel, cc, bot)
        except (TransientError, InputError, SlackApiError) as exc:
            errors.append(f"{channel}: {exc}")
            cursor.channels[channel] = cc
            continue
        cursor.channels[channel] = nxt
        found.update({k: v for k, v in hits.items() if k not in found and is_ticket_key(k)})
    referenced = {
        key: registry.keys_mentioned(str(message.get("text") or ""))
        for key, message in found.items()
    }

    def in_flight_reference(key: str, holds: TicketHolds) -> str | None:
        held = [r for r in referenced[key] if r in holds.known]
        return f"{key} refers to {held[0]}, which has its own run; no new run" if held else None

    walk = Walk(
        list(found),
        cursor.dump,
        "; ".join(errors) or None,
        kept="those channels keep their cursor",
    )
    referred = [k for refs in referenced.values() for k in refs]
    return settle(instance, NAME, walk, log, drop=in_flight_reference, also_ask=referred)


def _tick(
    context: dg.SensorEvaluationContext, slack: SlackResource, client: SlackClient
) -> dg.SensorResult | dg.SkipReason:
    if not slack.channels:
        return dg.SkipReason("Slack has no channels to poll: set SLACK_CHANNELS (comma-separated)")
    return poll_slack(context.instance, client, slack.channels, context.cursor, context.log)


slack_mentions = intake_sensor(
    name=SlackCursor.SENSOR,
    source=NAME,
    tick=_tick,
    interval_s=SLACK_POLL_INTERVAL_S,
    default_status=sensor_default_status(),
    description="Mentions of the bot in the configured Slack channels -> ticket runs.",
)
