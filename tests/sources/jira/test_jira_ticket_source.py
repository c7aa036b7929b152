"""Jira through the ticket-source port: intake routes ``jira-`` keys to it, the ticket channel
posts back through it once per marker, and Linear keys are untouched."""

from __future__ import annotations

import pytest

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.ticket_source import TicketSource
from veranda_dagster.domain.intake.intake import fetch_ticket
from veranda_dagster.partitions import is_ticket_key
from veranda_dagster.sim.jira_fake import JiraFake
from veranda_dagster.sources.channel import TicketChannel
from veranda_dagster.sources.jira.client import JiraClient
from veranda_dagster.sources.jira.ticket import JiraTicketSource
from veranda_dagster.sources.registry import ticket_sources

TOKEN = "ATATT3xFfGF0-fake-jira-token"


def test_intake_and_channel_route_qualified_keys_to_jira():
    with JiraFake(TOKEN) as fake:
        fake.file_issue(
            "PAY-17",
            "Refund double-charges",
            "Retries charge twice.",
            labels=["veranda"],
            attachments=[("trace.log", "text/plain")],
        )
        client = JiraClient(fake.base_url, TOKEN, email=fake.email, label="veranda")
        source = JiraTicketSource(client)
        assert isinstance(source, TicketSource)
        ticket = fetch_ticket("jira-PAY-17", ticket_sources([source]))
        assert (ticket.id, ticket.source, ticket.external_id) == ("jira-PAY-17", "jira", "PAY-17")
        assert ticket.description == "Retries charge twice."
        assert ticket.attachments[0].title == "trace.log"
        assert ticket.url == f"{fake.base_url}/browse/PAY-17"

        channel = TicketChannel(ticket_sources([source]))
        first = channel.post(ticket, "Opened a pull request: https://x/1")
        again = channel.post(ticket, "Opened a pull request: https://x/1")
        assert first == again and len(fake.comment_texts("PAY-17")) == 1

        with pytest.raises(ConfigError, match="Linear is not configured"):
            fetch_ticket("PAY-17", ticket_sources([source]))  # a Linear key stays Linear
        with pytest.raises(ConfigError, match="not configured"):
            TicketChannel(ticket_sources()).post(ticket, "x")


def test_qualified_keys_are_valid_partition_keys():
    assert is_ticket_key("jira-PAY-17") and is_ticket_key("jira-AB_C-1")
    assert not is_ticket_key("jira-pay-17") and not is_ticket_key("jira-PAY")
    assert is_ticket_key("PAY-17")  # existing keys keep working
