"""The one partitioning of the graph: every ticket is a dynamic partition.

Keys are Linear identifiers (``ENG-123``), ``slack-<channel>-<ts>`` for a Slack thread, or a
source-qualified key (``jira-PAY-17``) for a source whose own keys look like Linear's. The
sensors add keys; nothing else does.
"""

from __future__ import annotations

import re

import dagster as dg

TICKETS_NAME = "tickets"
TICKETS = dg.DynamicPartitionsDefinition(name=TICKETS_NAME)

TICKET_JOB = "ticket_run"
"""The job every ticket run launches: the whole phase graph for one partition."""

TICKET_TAG = "veranda/ticket"
"""Run tag carrying the ticket key, which the dedup guard queries on the instance."""

_LINEAR_KEY = re.compile(r"^[A-Z][A-Z0-9]{0,9}-\d{1,9}$")
_SLACK_KEY = re.compile(r"^slack-[A-Z0-9]{5,20}-\d{6,12}\.\d{1,9}$")
_QUALIFIED_KEY = re.compile(r"^jira-[A-Z][A-Z0-9_]{0,254}-\d{1,12}$")


def is_ticket_key(key: str) -> bool:
    """A syntactically valid partition key: ``ENG-123``, ``slack-C0123ABCD-1712345678.000100``
    or ``jira-PAY-17``."""
    return bool(_LINEAR_KEY.match(key) or _SLACK_KEY.match(key) or _QUALIFIED_KEY.match(key))


def slack_key(channel: str, ts: str) -> str:
    return f"slack-{channel}-{ts}"


def parse_slack_key(key: str) -> tuple[str, str]:
    """``slack-C123-1712.0001`` -> (``C123``, ``1712.0001``)."""
    _, channel, ts = key.split("-", 2)
    return channel, ts
