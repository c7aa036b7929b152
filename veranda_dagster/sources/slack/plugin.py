"""Slack: a mention of the bot in a configured channel, keyed by its thread
(``slack-<channel>-<thread ts>``); on by default, polling once ``SLACK_CHANNELS`` is set.
"""

from __future__ import annotations

from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sources.registry import TicketSourceInfo
from veranda_dagster.sources.slack.resource import SECRET_ENV, SlackResource
from veranda_dagster.sources.slack.sensor import slack_mentions
from veranda_dagster.sources.slack.ticket import SlackTicketSource

TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "slack",
        r"xox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}",
        "xoxb-1234567890-1234567890-abcdefghijklmnopqrstuvwx",
        "api.slack.com/authentication/token-types (xoxb, xoxp, xoxe.xoxp config tokens)",
    ),
    TokenShape(
        "slack_app",
        r"xapp-[0-9]-[A-Za-z0-9-]{10,}",
        "xapp-1-A052FGTS2DL-5171572773297-610b6a11f4b7eb819e87b767d80e6575",
        "api.slack.com/authentication/token-types#app",
    ),
    TokenShape(
        "slack_webhook",
        r"hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
        "hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "api.slack.com/messaging/webhooks (the path is the credential)",
    ),
)
"""Slack's token formats, so the scrubber masks them wherever they appear."""

PLUGIN = TicketSourceInfo(
    port=SlackTicketSource,
    title="Slack",
    resource=SlackResource,
    secret_env=SECRET_ENV,
    setup_hint="set SLACK_BOT_TOKEN",
    sensor=slack_mentions,
    on_by_default=True,
    token_shapes=TOKENS,
)
