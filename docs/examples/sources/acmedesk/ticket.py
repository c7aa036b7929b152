"""Acme Desk as a ported ticket source: keys ``acmedesk-<QUEUE>-<number>`` (a source-qualified
tracker key, one of the grammars ``domain.core.ticket_key`` admits), fetch, post once."""

from __future__ import annotations

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.ticket_key import is_ticket_key
from veranda_dagster.domain.core.ticket_source import KeyGrammar, SourcePort

from .client import AcmeDeskClient

NAME = "acmedesk"
PREFIX = NAME + "-"


def owns(key: str) -> bool:
    return key.startswith(PREFIX) and is_ticket_key(key)


def address(key: str) -> Ticket:
    """The ticket a key names (``acmedesk-DESK-42`` -> ``DESK-42``), enough to comment on it."""
    return Ticket(id=key, source=NAME, title=key, external_id=key.removeprefix(PREFIX))


KEYS = KeyGrammar(example="acmedesk-DESK-42", owns=owns, address=address)


class AcmeDeskTicketSource(SourcePort[AcmeDeskClient]):
    name = NAME
    keys = KEYS

    def fetch(self, key: str) -> Ticket:
        if not self.owns(key):
            raise InputError(f"ticket key {key!r} is not an Acme Desk key (acmedesk-DESK-42)")
        raw = self.client.get_ticket(key.removeprefix(PREFIX))
        return Ticket(
            id=key,
            source=NAME,
            title=str(raw.get("subject") or key),
            description=str(raw.get("body") or ""),
            url=raw.get("url") if isinstance(raw.get("url"), str) else None,
            external_id=key.removeprefix(PREFIX),
        )

    def post(self, ticket: Ticket, text: str, marker: str) -> str:
        number = ticket.external_id or ticket.id.removeprefix(PREFIX)
        return self.client.post_once(number, text, marker)
