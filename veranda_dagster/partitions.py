"""The one partitioning of the graph: every ticket is a dynamic partition.

Keys are Linear identifiers (``ENG-123``), ``slack-<channel>-<ts>`` for a Slack thread, or a
source-qualified key (``jira-PAY-17``) for a source whose own keys look like Linear's. The
sensors add keys; nothing else does.
"""

from __future__ import annotations

import dagster as dg

from veranda_dagster.domain.ticket_key import is_ticket_key

TICKETS_NAME = "tickets"
TICKETS = dg.DynamicPartitionsDefinition(name=TICKETS_NAME)

TICKET_JOB = "ticket_run"
"""The job every ticket run launches: the whole phase graph for one partition."""

TICKET_TAG = "veranda/ticket"
"""Run tag carrying the ticket key, which the dedup guard queries on the instance."""

TICKET_TAKEN_TAG = "veranda/ticket-materialized"
"""Run tag ``ticket``'s success hook sets: this run materialized the ticket, so the ticket is
taken even if the run fails later (the dedup guard reads it in its one runs query)."""

__all__ = [
    "TICKETS",
    "TICKETS_NAME",
    "TICKET_JOB",
    "TICKET_TAG",
    "TICKET_TAKEN_TAG",
    "is_ticket_key",
    "parse_slack_key",
]


def slack_key(channel: str, ts: str) -> str:
    return f"slack-{channel}-{ts}"


def parse_slack_key(key: str) -> tuple[str, str]:
    """``slack-C123-1712.0001`` -> (``C123``, ``1712.0001``)."""
    _, channel, ts = key.split("-", 2)
    return channel, ts
