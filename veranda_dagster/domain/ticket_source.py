"""What the pipeline needs from a ticket source it reaches through a port, as a Protocol.

A source owns a grammar of source-qualified partition keys (``<name>-<its own key>``), reads
the ticket behind one of its keys, and posts back to the ticket (idempotently: the ``marker``
identifies one message across retries). Intake (``intake.fetch_ticket``) and the ticket channel
route by key and by ``Ticket.source`` to the source that owns them, so a new source is a new
provider module that implements this, not a new branch in either.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from veranda_dagster.domain.models import Ticket


@runtime_checkable
class TicketSource(Protocol):
    @property
    def name(self) -> str:
        """The ``Ticket.source`` value and the key prefix this source owns."""
        ...

    def owns(self, key: str) -> bool: ...

    def fetch(self, key: str) -> Ticket: ...

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        """Post ``text`` once per ``marker``; a repeat returns the first post's id."""
        ...
