"""``AcmeDeskResource``: the one binding of Acme Desk's token, shared by its sensor, the
``ticket`` phase and every post back to one of its tickets."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field

from veranda_dagster.settings import secret, setting
from veranda_dagster.sources.resource import TicketSourceResource

from .client import AcmeDeskClient

SECRET_ENV = ("ACMEDESK_TOKEN",)
DEFAULT_URL = "https://desk.acme.test/api"


class AcmeDeskResource(TicketSourceResource):
    token: str | None = Field(default=None, repr=False)
    base_url: str = DEFAULT_URL

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AcmeDeskResource:
        """Unset ``ACMEDESK_TOKEN`` means "not configured", never a load error."""
        return cls(
            token=secret(SECRET_ENV[0], environ),
            base_url=setting("ACMEDESK_URL", DEFAULT_URL, environ),
        )

    @property
    def configured(self) -> bool:
        return bool(self.token)

    def client(self) -> AcmeDeskClient:
        return AcmeDeskClient(self.base_url, self.token)
