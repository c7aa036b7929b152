"""A ticket JSON file given on the command line (``--ticket``), read and checked.

Its own module so that a command reading a ticket (``veranda pack``, ``veranda detect-repo``)
imports only the ticket model and the file bounds, not repository detection or the plugins:
``veranda pack`` starts without Dagster or the HTTP client (``NEEDS_PLUGINS`` in ``cli``).
"""

from __future__ import annotations

from veranda_dagster.domain.core.bounds import MAX_TICKET_FILE_BYTES
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.input_files import load_document, validate_document
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.ticket_bounds import bound_ticket
from veranda_dagster.sources import source_names


def load_ticket(path: str, what: str = "ticket") -> Ticket:
    """A ticket JSON file: a regular file within ``MAX_TICKET_FILE_BYTES`` and the JSON depth
    bound, validated, then held to the ticket bounds like one read from Linear."""
    data = load_document(path, what=what, max_bytes=MAX_TICKET_FILE_BYTES, as_json=True)
    ticket = validate_document(Ticket, data, f"{what} {path}")
    if ticket.source not in source_names():
        known = ", ".join(source_names())
        raise InputError(f"{what} {path}: field 'source': {ticket.source!r} is not one of {known}")
    return bound_ticket(ticket)
