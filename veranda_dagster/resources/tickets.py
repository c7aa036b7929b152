"""``TicketSourcesResource``: the enabled ticket sources, for reading a ticket and posting back.

``VERANDA_SOURCES`` (comma list, default ``linear,slack``) names the sources a deployment takes
tickets from; ``jira`` adds Jira (``VERANDA_JIRA_INTAKE=1`` is kept as an alias for adding it).
The ``ticket`` phase fetches through ``fetch`` and every post (the ticket comment, the fallback
notice, the budget note, the failed-run note) goes through ``channel``, so a ``jira-PAY-17``
ticket is read from and answered on Jira, and a disabled source's key is a ``ConfigError``
naming the setting instead of a silent re-route.

The sources' own resources (``linear``, ``slack``, ``jira``) are nested here and bound once in
the Definitions under their own keys, where their sensors take them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import dagster as dg
from pydantic import Field

from veranda_dagster.clients import jira_ticket, linear_ticket, slack_ticket
from veranda_dagster.clients.linear import LinearClient
from veranda_dagster.clients.slack import SlackClient
from veranda_dagster.clients.ticket_channel import TicketChannel
from veranda_dagster.clients.ticket_sources import SOURCE_NAMES, ticket_sources
from veranda_dagster.domain import intake
from veranda_dagster.domain.errors import ConfigError
from veranda_dagster.domain.models import Ticket
from veranda_dagster.domain.ticket_source import TicketSource, UnconfiguredSource
from veranda_dagster.resources._env import listing, setting
from veranda_dagster.resources.jira import JiraResource
from veranda_dagster.resources.linear import LinearResource
from veranda_dagster.resources.slack import SlackResource

SOURCES_ENV = "VERANDA_SOURCES"
JIRA_INTAKE_ENV = "VERANDA_JIRA_INTAKE"
DEFAULT_SOURCES = ("linear", "slack")
KNOWN_SOURCES = SOURCE_NAMES


def enabled_sources(environ: Mapping[str, str] | None = None) -> list[str]:
    """``VERANDA_SOURCES`` as a list (plus ``jira`` under the old alias); an unknown name is a
    ``ConfigError`` at load, naming the choices."""
    names = [n.lower() for n in listing(SOURCES_ENV, ",".join(DEFAULT_SOURCES), environ)]
    unknown = [n for n in names if n not in KNOWN_SOURCES]
    if unknown:
        raise ConfigError(
            f"{SOURCES_ENV}: unknown source(s) {', '.join(unknown)}; "
            f"choose from {', '.join(KNOWN_SOURCES)}"
        )
    if setting(JIRA_INTAKE_ENV, "", environ) == "1" and "jira" not in names:
        names.append("jira")
    return list(dict.fromkeys(names))


class TicketSourcesResource(dg.ConfigurableResource):
    """Which sources are on, and their connections."""

    linear: LinearResource
    slack: SlackResource
    jira: JiraResource
    enabled: list[str] = Field(default_factory=lambda: list(DEFAULT_SOURCES))

    @classmethod
    def from_env(
        cls,
        linear: LinearResource,
        slack: SlackResource,
        jira: JiraResource,
        environ: Mapping[str, str] | None = None,
    ) -> TicketSourcesResource:
        return cls(linear=linear, slack=slack, jira=jira, enabled=enabled_sources(environ))

    def is_enabled(self, name: str) -> bool:
        return name in self.enabled

    def linear_client(self) -> LinearClient | None:
        on = self.is_enabled("linear") and self.linear.configured
        return self.linear.client() if on else None

    def slack_client(self) -> SlackClient | None:
        on = self.is_enabled("slack") and self.slack.configured
        return self.slack.client() if on else None

    def ported(self) -> list[TicketSource]:
        """Sources routed ahead of Linear and Slack: Jira when enabled (live, or unconfigured
        naming its variables), and every disabled source, which owns its keys but refuses them
        naming ``VERANDA_SOURCES``, so a disabled source's key never falls through."""
        ported: list[TicketSource] = []
        if self.is_enabled(jira_ticket.NAME):
            ported.append(
                self.jira.ticket_source()
                if self.jira.configured
                else UnconfiguredSource(
                    jira_ticket.NAME,
                    lambda k: k.startswith(jira_ticket.PREFIX),
                    "set JIRA_BASE_URL and JIRA_API_TOKEN",
                    "Jira",
                )
            )
        for name, owns, title in _OWNERS:
            if not self.is_enabled(name):
                hint = f"add {name} to {SOURCES_ENV}"
                ported.append(UnconfiguredSource(name, owns, hint, f"{title} (not enabled)"))
        return ported

    def sources(self) -> list[TicketSource]:
        """Every source in routing order (see ``clients.ticket_sources``)."""
        return ticket_sources(self.linear_client(), self.slack_client(), self.ported())

    def fetch(self, key: str) -> Ticket:
        """The ticket behind a partition key, from the source that owns the key."""
        return intake.fetch_ticket(key, self.sources())

    def channel(self) -> TicketChannel:
        """Where posts to a ticket go: its own source's comment thread."""
        return TicketChannel(self.linear_client(), self.slack_client(), self.ported())


_OWNERS: tuple[tuple[str, Callable[[str], bool], str], ...] = (
    (jira_ticket.NAME, lambda k: k.startswith(jira_ticket.PREFIX), "Jira"),
    (linear_ticket.NAME, lambda k: bool(linear_ticket.KEY.fullmatch(k)), "Linear"),
    (slack_ticket.NAME, lambda k: k.startswith(slack_ticket.PREFIX), "Slack"),
)
"""Which keys each known source owns, for refusing a disabled source's key by name."""
