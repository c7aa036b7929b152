"""Linear as a ported ticket source (``domain.core.ticket_source.TicketSource``).

Linear's identifiers (``ENG-123``) are the one unqualified key shape (``ticket_key.TRACKER_KEY``):
partitions made before keys were source-qualified keep working, so Linear owns every bare key
and a second tracker with the same shape (Jira) qualifies its own. Posting puts the dedup marker
in the Markdown body as an HTML comment and reads the issue's comments for it first.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Attachment, Ticket
from veranda_dagster.domain.core.ticket_key import TRACKER_KEY
from veranda_dagster.domain.core.ticket_source import KeyGrammar, SourcePort

NAME = "linear"

KEY = TRACKER_KEY
"""The keys Linear owns: its identifiers as they are (``ENG-123``), never qualified."""

KEY_IN_TEXT = re.compile(r"(?<![A-Za-z0-9-])([A-Z][A-Z0-9]{0,9}-\d{1,9})(?![A-Za-z0-9-])")
"""A Linear identifier mentioned in prose (``ENG-123``)."""


def owns(key: str) -> bool:
    return bool(KEY.fullmatch(key))


def address(key: str) -> Ticket:
    """The issue as its identifier names it; the comment id is looked up when posting."""
    return Ticket(id=key, source=NAME, title=key)


KEYS = KeyGrammar(example="ENG-123", owns=owns, address=address, mentioned=KEY_IN_TEXT.findall)


class LinearIssues(Protocol):
    """What the source needs from ``client.LinearClient``."""

    def get_issue(self, identifier: str) -> dict[str, Any]: ...

    def comments(self, issue_id: str) -> list[dict[str, Any]]: ...

    def comment_create(self, issue_id: str, body: str) -> str: ...

    def own_user_id(self) -> str: ...


def _author(comment: dict[str, Any]) -> str | None:
    user = comment.get("user")
    return str(user.get("id")) if isinstance(user, dict) and user.get("id") else None


def _field(node: dict[str, Any], name: str) -> str:
    value = node.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"linear payload: field {name!r} is missing or not a string")
    return value


def _nodes(node: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """``labels{nodes{...}}`` connections; a missing connection is empty, a bad one an error."""
    conn = node.get(name)
    if conn is None:
        return []
    items = conn.get("nodes") if isinstance(conn, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise InputError(f"linear payload: field '{name}.nodes' is not a list of objects")
    return items


def ticket_from_linear(node: dict[str, Any]) -> Ticket:
    """A Linear issue node (PollIssues/GetIssue shape) as a Ticket keyed by its identifier."""
    if not isinstance(node, dict):
        raise InputError("linear payload: issue is not an object")
    identifier = _field(node, "identifier")
    if not KEY.fullmatch(identifier):
        raise InputError(f"linear payload: field 'identifier' {identifier!r} is not like ENG-123")
    labels = [str(n["name"]) for n in _nodes(node, "labels") if n.get("name")]
    attachments = [
        Attachment(url=str(n["url"]), title=n.get("title"))
        for n in _nodes(node, "attachments")
        if n.get("url")
    ]
    description = node.get("description") or ""
    if not isinstance(description, str):
        raise InputError("linear payload: field 'description' is not a string")
    return Ticket(
        id=identifier,
        source=NAME,
        title=_field(node, "title"),
        description=description,
        labels=labels,
        attachments=attachments,
        url=node.get("url") if isinstance(node.get("url"), str) else None,
        external_id=_field(node, "id"),
        updated_at=node.get("updatedAt") if isinstance(node.get("updatedAt"), str) else None,
    )


class LinearTicketSource(SourcePort[LinearIssues]):
    name = NAME
    keys = KEYS

    def fetch(self, key: str) -> Ticket:
        if not self.owns(key):
            raise InputError(f"ticket key {key!r} is not a Linear identifier (ENG-123)")
        return ticket_from_linear(self.client.get_issue(key))

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        issue_id = ticket.external_id or str(self.client.get_issue(ticket.id).get("id") or "")
        if not issue_id:
            raise InputError(f"ticket {ticket.id}: no Linear issue id to comment on")
        tag, own = f"<!-- {marker} -->", self.client.own_user_id()
        for comment in self.client.comments(issue_id):  # ours by author id: anyone can paste a tag
            if tag in str(comment.get("body") or "") and _author(comment) == own:
                return str(comment["id"])
        return self.client.comment_create(issue_id, f"{text}\n\n{tag}")
