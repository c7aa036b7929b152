"""Jira as a ported ticket source (``domain.core.ticket_source.TicketSource``).

Keys are source-qualified (``jira-PAY-17``), so a Jira ``PAY-17`` never reaches Linear and never
shares a partition with a Linear ``PAY-17``. The ticket's description is the issue's ADF body as
text and its attachments are their content URLs; posting goes through ``JiraClient.post_once``,
which carries the marker and reads the issue's comments for it first.
"""

from __future__ import annotations

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Attachment, Ticket
from veranda_dagster.domain.core.ticket_source import KeyGrammar, SourcePort
from veranda_dagster.sources.jira.client import JiraClient, JiraIssue

NAME = "jira"
PREFIX = NAME + "-"


def partition_key(issue_key: str) -> str:
    """A source-qualified partition key (``jira-PAY-17``): a Jira ``PAY-17`` and a Linear
    ``PAY-17`` are different tickets and must never share a partition."""
    return PREFIX + issue_key


def owns(key: str) -> bool:
    return key.startswith(PREFIX)


def address(key: str) -> Ticket:
    """The issue a key names (``jira-PAY-17`` -> ``PAY-17``), enough to comment on it."""
    return Ticket(id=key, source=NAME, title=key, external_id=key.removeprefix(PREFIX))


KEYS = KeyGrammar(example="jira-PAY-17", owns=owns, address=address)


def ticket_from_jira(issue: JiraIssue) -> Ticket:
    return Ticket(
        id=partition_key(issue.key),
        source=NAME,
        title=issue.summary or issue.key,
        description=issue.description,
        labels=issue.labels,
        attachments=[Attachment(url=a.url, title=a.filename) for a in issue.attachments],
        url=issue.url,
        external_id=issue.key,
        updated_at=issue.updated or None,
    )


class JiraTicketSource(SourcePort[JiraClient]):
    name = NAME
    keys = KEYS

    def fetch(self, key: str) -> Ticket:
        if not self.owns(key):
            raise InputError(f"ticket key {key!r} is not a Jira key (jira-ABC-123)")
        return ticket_from_jira(self.client.get_issue(key.removeprefix(PREFIX)))

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        issue_key = ticket.external_id or ticket.id.removeprefix(PREFIX)
        return self.client.post_once(issue_key, text, marker)
