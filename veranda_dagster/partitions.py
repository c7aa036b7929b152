"""The one partitioning of the graph: every ticket is a dynamic partition.

Keys are in the one grammar of ``domain.core.ticket_key``; which source owns which keys is each
source's own grammar (``sources.registry``: ``ENG-123`` is Linear's, ``slack-<channel>-<ts>``
Slack's, ``jira-PAY-17`` Jira's). The sensors add keys; nothing else does.
"""

from __future__ import annotations

import dagster as dg

from veranda_dagster.domain.core.ticket_key import is_ticket_key

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
]
