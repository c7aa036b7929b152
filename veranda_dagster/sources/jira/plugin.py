"""Jira (Cloud REST v3, Data Center v2): issues with the bot's label or assignee, keyed
``jira-PAY-17`` so a Jira and a Linear ``PAY-17`` never share a partition.

Opt-in: enabled by ``VERANDA_SOURCES=...,jira`` or the older ``VERANDA_JIRA_INTAKE=1``.
"""

from __future__ import annotations

from veranda_dagster.sources.jira import resource as jira
from veranda_dagster.sources.jira import ticket as jira_ticket
from veranda_dagster.sources.jira.sensor import jira_tickets
from veranda_dagster.sources.registry import TicketSourceInfo, register

SOURCE = register(
    TicketSourceInfo(
        port=jira_ticket.JiraTicketSource,
        title="Jira",
        resource=jira.JiraResource,
        secret_env=jira.SECRET_ENV,
        setup_hint="set JIRA_BASE_URL and JIRA_API_TOKEN",
        sensor=jira_tickets,
        alias_env="VERANDA_JIRA_INTAKE",
    )
)
