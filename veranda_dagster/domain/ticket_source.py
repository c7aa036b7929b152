"""What the pipeline needs from a ticket source it reaches through a port, as a Protocol.

A source owns a grammar of source-qualified partition keys (``<name>-<its own key>``), reads
the ticket behind one of its keys, and posts back to the ticket (idempotently: the ``marker``
identifies one message across retries). Intake (``intake.fetch_ticket``) and the ticket channel
route by key and by ``Ticket.source`` to the source that owns them, so a new source is a new
provider module that implements this, not a new branch in either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from veranda_dagster.domain.errors import ConfigError
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


class UnconfiguredSource:
    """A source that owns its keys but has no credentials: reading or posting names the setting
    to make, instead of a key falling through to "no source owns it"."""

    def __init__(
        self, name: str, owns: Callable[[str], bool], hint: str, title: str | None = None
    ) -> None:
        self.name = name
        self._owns = owns
        self.hint = hint
        self.title = title or name
        """How people name the source in an error (``Name`` by default)."""

    def owns(self, key: str) -> bool:
        return self._owns(key)

    def _refuse(self, what: str) -> ConfigError:
        return ConfigError(f"ticket {what}: {self.title} is not configured ({self.hint})")

    def fetch(self, key: str) -> Ticket:
        raise self._refuse(key)

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        raise self._refuse(ticket.id)
