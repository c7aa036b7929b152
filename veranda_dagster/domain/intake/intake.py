"""Turn a partition key into a ``Ticket`` through the ticket source that owns the key.

The sensors only decide *which* keys exist; the ``ticket`` asset calls ``fetch_ticket`` so the
full payload is read in the run, where a failure is retried and recorded, not in the sensor.
The sources are ``TicketSource`` ports (one provider module each, outside the domain), so the
domain never imports httpx and a new source is a new provider, not a branch here.
"""

from __future__ import annotations

from collections.abc import Sequence

from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.ticket_key import require_ticket_key
from veranda_dagster.domain.core.ticket_source import TicketSource
from veranda_dagster.domain.intake.ticket_bounds import bound_ticket


def _keyed(ticket: Ticket, key: str) -> Ticket:
    """The ticket as read, under the key it was asked for: the id names folders and branches,
    so a payload naming another ticket (a hostile server's thread id) is refused."""
    if ticket.id != key:
        raise InputError(f"ticket {key}: the source answered with another ticket {ticket.id!r}")
    return bound_ticket(ticket)


def fetch_ticket(key: str, sources: Sequence[TicketSource]) -> Ticket:
    """Read the ticket behind a partition key (a key in the one grammar) from the first of
    ``sources`` that owns it."""
    require_ticket_key(key)
    for source in sources:
        if source.owns(key):
            return _keyed(source.fetch(key), key)
    names = ", ".join(s.name for s in sources) or "none"
    raise ConfigError(f"ticket {key}: no configured ticket source owns this key ({names})")
