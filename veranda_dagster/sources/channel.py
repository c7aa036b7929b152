"""Where the agent talks back to a person: the ticket's own source (a Linear comment, a reply in
the Slack thread, a Jira comment).

A run that is retried (or resumed in a new pod) re-executes its posting step, so ``post`` is
idempotent: each message carries a hidden marker derived from the ticket and the text (or a
caller's key), and each source reads its thread for the marker before posting.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.ticket_source import TicketSource


def post_marker(ticket: Ticket, text: str, key: str | None = None) -> str:
    digest = hashlib.sha256(f"{ticket.id}\n{key or text}".encode()).hexdigest()[:16]
    return f"veranda:{digest}"


class TicketChannel:
    """Post to the ticket's own channel; returns the comment id / message ts."""

    def __init__(self, sources: Sequence[TicketSource]) -> None:
        self.sources = {s.name: s for s in reversed(sources)}
        """Every source by the ``Ticket.source`` it owns (the first listed wins a name); the
        routing list (``sources.registry.ticket_sources``) lists every registered source, so
        a source without credentials refuses by naming its setting."""

    def post(self, ticket: Ticket, text: str, *, key: str | None = None) -> str | None:
        """Post ``text`` once per (ticket, ``key`` or text); a repeat returns the first id."""
        source = self.sources.get(ticket.source)
        if source is None:
            raise ConfigError(f"ticket {ticket.id}: source {ticket.source!r} is not configured")
        return source.post(ticket, text, post_marker(ticket, text, key))
