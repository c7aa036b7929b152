"""The per-ticket spend ledger on the value store: one JSON line per paid model call.

It lives where the phase values live (a ``.jsonl`` beside them on a filesystem, a table in
PostgreSQL), so every step process and every pod reads the same total, and a resumed run
starts from what the ticket has already spent (``domain.core.budget``).
"""

from __future__ import annotations

from pydantic import ValidationError

from veranda_dagster.domain.core.budget import SpendEntry
from veranda_dagster.storage.backends import Values

SPEND_LOG = "spend"


class StoreLedger:
    """``SpendLedger`` over a ``Values`` backend."""

    def __init__(self, values: Values, log: str = SPEND_LOG) -> None:
        self.values = values
        self.log = log

    def entries(self, ticket_id: str) -> list[SpendEntry]:
        """Every readable entry, oldest first; a line that does not parse (a torn write) is
        skipped rather than failing the run that reads it."""
        found: list[SpendEntry] = []
        for line in self.values.lines(self.log, ticket_id):
            try:
                found.append(SpendEntry.model_validate_json(line))
            except ValidationError:
                continue
        return found

    def spent(self, ticket_id: str) -> float:
        return round(sum(e.usd for e in self.entries(ticket_id)), 6)

    def record(self, ticket_id: str, entry: SpendEntry) -> None:
        self.values.append(self.log, ticket_id, entry.model_dump_json())
