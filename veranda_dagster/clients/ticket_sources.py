"""The ticket sources a deployment reads and posts through, in the order keys are routed.

Each source owns its own key grammar, so order only matters for reporting; a source without
credentials is still listed, unconfigured, so a key it owns fails naming the setting to make.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from veranda_dagster.clients import jira_ticket, linear_ticket, slack_ticket
from veranda_dagster.clients.linear_ticket import LinearTicketSource
from veranda_dagster.clients.slack_ticket import SlackTicketSource
from veranda_dagster.domain.ticket_source import TicketSource, UnconfiguredSource

if TYPE_CHECKING:  # the clients (and httpx) are the caller's: reading a ticket file needs the
    # sources' names only, and ``veranda pack`` starts in well under a second without them
    from veranda_dagster.clients.linear import LinearClient
    from veranda_dagster.clients.slack import SlackClient

SOURCE_NAMES = (jira_ticket.NAME, linear_ticket.NAME, slack_ticket.NAME)
"""Every ticket source this build knows: a ticket file naming another one is refused."""


def ticket_sources(
    linear: LinearClient | None,
    slack: SlackClient | None,
    extra: Sequence[TicketSource] = (),
) -> list[TicketSource]:
    """``extra`` (ported sources such as Jira) first, then Linear and Slack, each either live
    or unconfigured with the variable that configures it."""
    sources: list[TicketSource] = list(extra)
    sources.append(
        LinearTicketSource(linear)
        if linear is not None
        else UnconfiguredSource(
            linear_ticket.NAME,
            lambda k: bool(linear_ticket.KEY.fullmatch(k)),
            "set LINEAR_API_KEY",
            "Linear",
        )
    )
    sources.append(
        SlackTicketSource(slack)
        if slack is not None
        else UnconfiguredSource(
            slack_ticket.NAME,
            lambda k: k.startswith(slack_ticket.PREFIX),
            "set SLACK_BOT_TOKEN",
            "Slack",
        )
    )
    return sources
