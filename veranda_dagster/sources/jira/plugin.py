"""Jira (Cloud REST v3, Data Center v2): issues with the bot's label or assignee, keyed
``jira-PAY-17`` so a Jira and a Linear ``PAY-17`` never share a partition.

Opt-in: enabled by ``VERANDA_SOURCES=...,jira`` or the older ``VERANDA_JIRA_INTAKE=1``.
"""

from __future__ import annotations

from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sources.jira.resource import SECRET_ENV, JiraResource
from veranda_dagster.sources.jira.sensor import jira_tickets
from veranda_dagster.sources.jira.ticket import JiraTicketSource
from veranda_dagster.sources.registry import TicketSourceInfo

TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "atlassian_api_token",
        r"ATATT[A-Za-z0-9_=-]{20,}",
        "ATATT3xFfGF0T4nJ8x2kq9Zr1sVb6yU0wH3eL5pD7mC_Ng=A1B2C3D4",
        "unverified: Atlassian API tokens seen in the wild start with ATATT; no published format",
    ),
)
"""Atlassian's API tokens, so the scrubber masks them wherever they appear."""

PLUGIN = TicketSourceInfo(
    port=JiraTicketSource,
    title="Jira",
    resource=JiraResource,
    secret_env=SECRET_ENV,
    setup_hint="set JIRA_BASE_URL and JIRA_API_TOKEN",
    sensor=jira_tickets,
    alias_env="VERANDA_JIRA_INTAKE",
    token_shapes=TOKENS,
)
