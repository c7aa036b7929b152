"""Jira as a ported ticket source (``domain.ticket_source.TicketSource``).

Keys are source-qualified (``jira-PAY-17``), so a Jira ``PAY-17`` never reaches Linear and never
shares a partition with a Linear ``PAY-17``. The ticket's description is the issue's ADF body as
text and its attachments are their content URLs; posting goes through ``JiraClient.post_once``,
which carries the marker and reads the issue's comments for it first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from veranda_dagster.domain.errors import InputError
from veranda_dagster.domain.models import Attachment, Ticket

if TYPE_CHECKING:  # the client (and httpx) only when a source is built: ``veranda pack`` and
    # every reader of a ticket file need the source's name, not its transport
    from veranda_dagster.clients.jira import JiraClient, JiraIssue

NAME = "jira"
PREFIX = NAME + "-"


def ticket_from_jira(issue: JiraIssue) -> Ticket:
    return Ticket(
        id=PREFIX + issue.key,
        source=NAME,
        title=issue.summary or issue.key,
        description=issue.description,
        labels=issue.labels,
        attachments=[Attachment(url=a.url, title=a.filename) for a in issue.attachments],
        url=issue.url,
        external_id=issue.key,
        updated_at=issue.updated or None,
    )


class JiraTicketSource:
    name = NAME

    def __init__(self, client: JiraClient) -> None:
        self.client = client

    def owns(self, key: str) -> bool:
        return key.startswith(PREFIX)

    def fetch(self, key: str) -> Ticket:
        if not self.owns(key):
            raise InputError(f"ticket key {key!r} is not a Jira key (jira-ABC-123)")
        return ticket_from_jira(self.client.get_issue(key.removeprefix(PREFIX)))

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        issue_key = ticket.external_id or ticket.id.removeprefix(PREFIX)
        return self.client.post_once(issue_key, text, marker)
