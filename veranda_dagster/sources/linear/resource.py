"""``LinearResource``: the one binding of Linear's API key, shared by the ``linear_tickets``
sensor, the ``ticket`` phase and every post back to a Linear issue."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field

from veranda_dagster.settings import secret, setting
from veranda_dagster.sources.linear.client import LINEAR_API_URL, LinearClient
from veranda_dagster.sources.resource import TicketSourceResource

SECRET_ENV = ("LINEAR_API_KEY",)
"""The secrets this resource binds (the Helm services template and README list each)."""


class LinearResource(TicketSourceResource):
    """Linear connection settings; the key arrives through ``dg.EnvVar("LINEAR_API_KEY")``."""

    api_key: str | None = Field(default=None, repr=False)
    base_url: str = LINEAR_API_URL
    bot_user_id: str | None = None
    label: str | None = "veranda"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LinearResource:
        """Unset ``LINEAR_API_KEY`` means "not configured" (the sensor skips, a Linear ticket
        fails with a ``ConfigError`` naming the variable), never a code-location load error."""
        return cls(
            api_key=secret(SECRET_ENV[0], environ),
            base_url=setting("LINEAR_API_URL", LINEAR_API_URL, environ),
            bot_user_id=setting("LINEAR_BOT_USER_ID", "", environ) or None,
            label=setting("LINEAR_LABEL", "veranda", environ) or None,
        )

    @property
    def configured(self) -> bool:
        return bool(self.api_key)

    def client(self) -> LinearClient:
        return LinearClient(
            self.base_url, self.api_key, bot_user_id=self.bot_user_id, label=self.label
        )
