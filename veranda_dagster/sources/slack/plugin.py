"""Slack: a mention of the bot in a configured channel, keyed by its thread
(``slack-<channel>-<thread ts>``); on by default, polling once ``SLACK_CHANNELS`` is set.
"""

from __future__ import annotations

from veranda_dagster.sources.registry import TicketSourceInfo, register
from veranda_dagster.sources.slack import resource as slack
from veranda_dagster.sources.slack import ticket as slack_ticket
from veranda_dagster.sources.slack.sensor import slack_mentions

SOURCE = register(
    TicketSourceInfo(
        port=slack_ticket.SlackTicketSource,
        title="Slack",
        resource=slack.SlackResource,
        secret_env=slack.SECRET_ENV,
        setup_hint="set SLACK_BOT_TOKEN",
        sensor=slack_mentions,
        on_by_default=True,
    )
)
