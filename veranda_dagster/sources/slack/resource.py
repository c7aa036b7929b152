"""``SlackResource``: the one binding of the Slack bot token, shared by the ``slack_mentions``
sensor, the ``ticket`` phase and every reply in a ticket's thread."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field

from veranda_dagster.settings import listing, secret, setting
from veranda_dagster.sources.resource import TicketSourceResource
from veranda_dagster.sources.slack.client import SLACK_API_URL, SlackClient

SECRET_ENV = ("SLACK_BOT_TOKEN",)
"""The secrets this resource binds (the Helm services template and README list each)."""


class SlackResource(TicketSourceResource):
    """Slack connection settings; the token arrives through ``dg.EnvVar("SLACK_BOT_TOKEN")``."""

    bot_token: str | None = Field(default=None, repr=False)
    base_url: str = SLACK_API_URL
    channels: list[str] = Field(default_factory=list)
    bot_user_id: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SlackResource:
        """Unset ``SLACK_BOT_TOKEN`` means the sensor skips with a reason."""
        return cls(
            bot_token=secret(SECRET_ENV[0], environ),
            base_url=setting("SLACK_API_URL", SLACK_API_URL, environ),
            channels=listing("SLACK_CHANNELS", "", environ),
            bot_user_id=setting("SLACK_BOT_USER_ID", "", environ) or None,
        )

    @property
    def configured(self) -> bool:
        return bool(self.bot_token)

    def client(self) -> SlackClient:
        return SlackClient(self.base_url, self.bot_token, bot_user_id=self.bot_user_id)
