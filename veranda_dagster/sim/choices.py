"""Which ticket sources and forges the simulation can stand up (import-light, for the CLI)."""

from __future__ import annotations

TICKET_SOURCES = ("linear", "slack", "jira")
FORGES = ("github", "gitlab")
SENSORS = {"linear": "linear_tickets", "slack": "slack_mentions", "jira": "jira_tickets"}
"""The intake sensor that turns a ticket of each source into a run."""
