"""``veranda budget show|raise TICKET``: what a ticket spent, and raising its cap alone.

``show`` prints the ticket's spend per phase from the durable ledger (what the vendors billed,
metered by each turn's proxy), the cap in force and the requests counted. ``raise --to USD``
records a higher cap for that one ticket in the same store (the deployment's
``VERANDA_TICKET_BUDGET_USD`` stays the default for every other ticket); re-executing the
stopped run from failure then continues where the money ran out, without paying again for
any phase that finished. The store is the one the product uses: ``VERANDA_VALUE_STORE``
(``filesystem`` under ``VERANDA_VALUES_DIR`` or ``$DAGSTER_HOME/veranda_values``, or
``postgres`` at ``VERANDA_POSTGRES_URL``).
"""

from __future__ import annotations

import argparse
import json
import sys

from veranda_dagster.domain.core.bounds import TICKET_BUDGET_USD
from veranda_dagster.domain.core.budget import BUDGET_ENV, spent_by_phase
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.ticket_key import require_ticket_key
from veranda_dagster.settings import env_number
from veranda_dagster.storage.ledger import StoreLedger, ledger_from_env


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["show", "raise"],
        help="show: what the ticket spent per phase and its cap; raise: give it a higher cap",
    )
    parser.add_argument("ticket", help="the ticket key (ENG-123)")
    parser.add_argument("--to", type=float, help="raise: the ticket's new cap in USD")
    parser.add_argument("--json", action="store_true", help="show: one JSON object")


def summary(ledger: StoreLedger, ticket: str) -> dict[str, object]:
    default = env_number(BUDGET_ENV, TICKET_BUDGET_USD, float)
    raised = ledger.raised_cap(ticket)
    entries = ledger.entries(ticket)
    return {
        "ticket": ticket,
        "spent_usd": ledger.spent(ticket),
        "cap_usd": max(default, raised or 0.0),
        "raised_cap_usd": raised,
        "requests": len(entries),
        "metered_by_proxy": sum(e.source == "proxy" for e in entries),
        "by_phase": spent_by_phase(entries),
    }


def run(args: argparse.Namespace) -> int:
    ticket = require_ticket_key(args.ticket)
    ledger = ledger_from_env()
    if args.action == "raise":
        if args.to is None:
            raise InputError("raise needs --to USD (the ticket's new cap)")
        now = summary(ledger, ticket)
        if args.to <= float(str(now["spent_usd"])):
            raise InputError(
                f"{ticket} has already spent ${now['spent_usd']}: a cap of ${args.to:g} would "
                "stop it again at once"
            )
        ledger.raise_cap(ticket, args.to, by="veranda budget raise")
        print(
            f"{ticket}: cap raised to ${args.to:.2f} (spent ${now['spent_usd']}). "
            "Re-execute the stopped run from failure (Dagster UI: Re-execute > From failure) "
            "to continue; finished phases are not paid for again."
        )
        return 0
    shown = summary(ledger, ticket)
    if args.json:
        print(json.dumps(shown, indent=2, sort_keys=True))
        return 0
    lines = [
        f"{ticket}: spent ${shown['spent_usd']} of ${shown['cap_usd']} "
        f"({shown['requests']} request(s), {shown['metered_by_proxy']} metered by the proxy)"
    ]
    by_phase = shown["by_phase"]
    assert isinstance(by_phase, dict)
    lines += [f"  {phase:<16} ${usd:.4f}" for phase, usd in by_phase.items()]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
