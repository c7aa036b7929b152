"""What the pipeline needs from a ticket source it reaches through a port, as a Protocol.

A source owns a grammar of source-qualified partition keys (``<name>-<its own key>``), reads
the ticket behind one of its keys, and posts back to the ticket (idempotently: the ``marker``
identifies one message across retries). Intake (``intake.fetch_ticket``) and the ticket channel
route by key and by ``Ticket.source`` to the source that owns them, so a new source is a new
provider module that implements this, not a new branch in either.

The grammar (``KeyGrammar``) is a value of its own, not a method of a live source: a key must be
routed, refused by name or turned back into an address (a failed run's note) when the source
has no credentials, or none yet.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Ticket


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


@dataclass(frozen=True)
class KeyGrammar:
    """One source's partition keys, answered without a client."""

    example: str
    """A key the source owns (``ENG-123``): shown in errors, and checked against every other
    source's grammar so two sources never own the same key."""
    owns: Callable[[str], bool]
    address: Callable[[str], Ticket]
    """The ticket as far as its key alone names it (id, source, and whatever address the key
    carries: a thread, an issue key), for posting on a ticket that was never read."""
    mentioned: Callable[[str], list[str]] | None = None
    """The keys of this source written in prose (``ENG-123`` in a chat message), so a mention
    of a ticket already in flight is that ticket; ``None`` when its keys are not recognisable
    in prose without being mistaken for another source's."""


ClientT = TypeVar("ClientT")


class SourcePort(ABC, Generic[ClientT]):
    """A source's port over its API client: the class states the source's ``name`` and key
    grammar (``keys``), so the registry reads both without a client, and ``owns`` is the
    grammar's; a subclass reads (``fetch``) and posts (``post``, with the marker)."""

    name: str
    keys: KeyGrammar

    def __init__(self, client: ClientT) -> None:
        self.client = client

    def owns(self, key: str) -> bool:
        return self.keys.owns(key)

    @abstractmethod
    def fetch(self, key: str) -> Ticket: ...

    @abstractmethod
    def post(self, ticket: Ticket, text: str, marker: str) -> str: ...


class UnconfiguredSource:
    """A source that owns its keys but has no credentials: reading or posting names the setting
    to make, instead of a key falling through to "no source owns it"."""

    def __init__(self, name: str, keys: KeyGrammar, hint: str, title: str | None = None) -> None:
        self.name = name
        self.keys = keys
        self.hint = hint
        self.title = title or name
        """How people name the source in an error (``Name`` by default)."""

    def owns(self, key: str) -> bool:
        return self.keys.owns(key)

    def _refuse(self, what: str) -> ConfigError:
        return ConfigError(f"ticket {what}: {self.title} is not configured ({self.hint})")

    def fetch(self, key: str) -> Ticket:
        raise self._refuse(key)

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        raise self._refuse(ticket.id)
