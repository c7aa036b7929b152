"""A ticket's text held to its bounds the moment it is read, with what was cut said aloud.

A 50 MB description took ``detect-repo`` five minutes and 1.3 GB, and a NUL in a title failed
``repo_guess`` with an untyped ``ValueError`` (a NUL cannot ride in any argv or path). So every
ticket, from any source or a file, passes ``bound_ticket``: control characters other than
newline and tab are removed (a title also loses its newlines), the title is cut with an
ellipsis, the description is cut with a visible note naming how much was dropped (truncation is
safe there: the start of a pasted log still says what is wrong), and attachments and labels are
capped, the dropped attachments noted in the description.
"""

from __future__ import annotations

import re

from veranda_dagster.domain.core.bounds import (
    MAX_COMMENT_CHARS,
    MAX_TICKET_ATTACHMENTS,
    MAX_TICKET_DESCRIPTION_CHARS,
    MAX_TICKET_LABELS,
    MAX_TICKET_TITLE_CHARS,
)
from veranda_dagster.domain.core.models import Ticket

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""C0 controls and DEL except tab (09) and newline (0a); a CR is dropped too."""


def clean_text(text: str) -> str:
    return _CONTROL.sub("", text)


def cut_note(kept: int, total: int, what: str) -> str:
    return f"\n\n[veranda: {what} cut at {kept:,} of {total:,} characters]"


def bound_text(text: str, limit: int, what: str) -> str:
    """``text`` cleaned and, past ``limit`` characters, cut with a note saying so."""
    text = clean_text(text)
    if len(text) <= limit:
        return text
    return text[:limit] + cut_note(limit, len(text), what)


def bound_comment(body: str) -> str:
    return bound_text(body, MAX_COMMENT_CHARS, "comment")


def bound_ticket(ticket: Ticket) -> Ticket:
    title = " ".join(clean_text(ticket.title).split())
    if len(title) > MAX_TICKET_TITLE_CHARS:
        title = title[: MAX_TICKET_TITLE_CHARS - 1] + "\u2026"
    description = bound_text(ticket.description, MAX_TICKET_DESCRIPTION_CHARS, "description")
    attachments = ticket.attachments[:MAX_TICKET_ATTACHMENTS]
    dropped = len(ticket.attachments) - len(attachments)
    if dropped:
        description += (
            f"\n\n[veranda: {dropped} more attachment(s) not read; "
            f"the first {MAX_TICKET_ATTACHMENTS} are]"
        )
    labels = [clean_text(label) for label in ticket.labels[:MAX_TICKET_LABELS]]
    return ticket.model_copy(
        update={
            "title": title or "(untitled)",
            "description": description,
            "attachments": attachments,
            "labels": labels,
        }
    )
