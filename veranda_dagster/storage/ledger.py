"""The spend ledger on the value store: one JSON line per paid model request.

It lives where the phase values live (a ``.jsonl`` beside them on a filesystem, a table in
PostgreSQL), so every step process and every pod reads the same total, and a resumed run
starts from what the ticket has already spent (``domain.core.budget``). Three logs:

* ``spend``, per ticket: every entry;
* ``spend-org``, per org and UTC day (``acme@2026-12-05``): the same entries of tickets whose
  org is known, so an org's daily cap reads one short log instead of every ticket's;
* ``budget-cap``, per ticket: the caps raised for that ticket (``veranda budget raise``), the
  last one in force.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from pydantic import ValidationError

from veranda_dagster.domain.core.budget import SpendEntry
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.storage.value_stores import (
    FilesystemValues,
    PostgresValues,
    Values,
    default_values_dir,
)

SPEND_LOG = "spend"
ORG_SPEND_LOG = "spend-org"
CAP_LOG = "budget-cap"
MAX_RAISED_CAP_USD = 10_000.0
"""A raise past this is a typo (a cap is a guard, not a formality)."""


def utc_day(at: str | None = None) -> str:
    """``YYYY-MM-DD`` of an ISO timestamp (now when ``None``), in UTC."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).date().isoformat()


class StoreLedger:
    """``SpendLedger`` over a ``Values`` store."""

    def __init__(self, values: Values, log: str = SPEND_LOG) -> None:
        self.values = values
        self.log = log

    def _read(self, log: str, partition: str) -> list[SpendEntry]:
        """Every readable entry, oldest first; a line that does not parse (a torn write) is
        skipped rather than failing the run that reads it."""
        found: list[SpendEntry] = []
        for line in self.values.lines(log, partition):
            try:
                found.append(SpendEntry.model_validate_json(line))
            except ValidationError:
                continue
        return found

    def entries(self, ticket_id: str) -> list[SpendEntry]:
        return self._read(self.log, ticket_id)

    def spent(self, ticket_id: str) -> float:
        return round(sum(e.usd for e in self.entries(ticket_id)), 6)

    def record(self, ticket_id: str, entry: SpendEntry) -> None:
        self.values.append(self.log, ticket_id, entry.model_dump_json())
        if entry.org:
            self.values.append(
                ORG_SPEND_LOG, _org_day(entry.org, utc_day(entry.at)), entry.model_dump_json()
            )

    def org_spent(self, org: str, day: str | None = None) -> float:
        """What every ticket of ``org`` spent on the UTC ``day`` (today by default)."""
        entries = self._read(ORG_SPEND_LOG, _org_day(org, day or utc_day()))
        return round(sum(e.usd for e in entries), 6)

    # --- per-ticket caps ---------------------------------------------------------------------

    def raise_cap(self, ticket_id: str, usd: float, by: str = "") -> None:
        """Record a cap for this ticket alone (it takes effect at the next turn)."""
        if not 0 < usd <= MAX_RAISED_CAP_USD:
            raise InputError(f"a ticket cap must be above $0 and at most ${MAX_RAISED_CAP_USD:g}")
        line = {"cap_usd": round(usd, 6), "at": datetime.now(UTC).isoformat(), "by": by}
        self.values.append(CAP_LOG, ticket_id, json.dumps(line))

    def raised_cap(self, ticket_id: str) -> float | None:
        """The last cap raised for this ticket, or ``None``."""
        for line in reversed(self.values.lines(CAP_LOG, ticket_id)):
            try:
                value = json.loads(line).get("cap_usd")
            except (ValueError, AttributeError):
                continue
            if isinstance(value, int | float) and value > 0:
                return float(value)
        return None


def _org_day(org: str, day: str) -> str:
    return f"{org.lower()}@{day}"


def ledger_from_env() -> StoreLedger:
    """The ledger of the store the product uses, from the same settings (for the CLI):
    ``VERANDA_VALUE_STORE`` ``filesystem`` under ``VERANDA_VALUES_DIR`` (or
    ``$DAGSTER_HOME/veranda_values``), or ``postgres`` at ``VERANDA_POSTGRES_URL``."""
    store_kind = os.environ.get("VERANDA_VALUE_STORE", "filesystem").strip() or "filesystem"
    if store_kind == "filesystem":
        values: Values = FilesystemValues(
            os.environ.get("VERANDA_VALUES_DIR") or default_values_dir()
        )
    elif store_kind == "postgres":
        url = os.environ.get("VERANDA_POSTGRES_URL", "")
        if not url:
            raise ConfigError("VERANDA_VALUE_STORE=postgres needs VERANDA_POSTGRES_URL")
        values = PostgresValues(url)
    else:
        raise ConfigError(f"VERANDA_VALUE_STORE={store_kind!r} is not filesystem or postgres")
    return StoreLedger(values)
