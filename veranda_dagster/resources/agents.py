"""``AgentsResource``: the vendor coding CLIs a ticket's turns go to, and what they may spend.

The vendors file (``VERANDA_VENDORS_FILE``) picks and orders the vendors; every
phase's turns for one ticket go through one ``BudgetedAgent`` that reads and writes the
ticket's durable spend ledger in the value store, capped at ``VERANDA_TICKET_BUDGET_USD`` (or
the cap raised for that ticket with ``veranda budget raise``) and, once the ticket's repository
is known, at its org's daily cap (``daily_budget_usd`` in the orgs file).
The vendors' own keys are not config fields: each vendor declares its secret variables and
reads them from the worker's environment when it builds its CLI's (``vendors/registry``), so
they never pass through Dagster config at all.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.core.bounds import TICKET_BUDGET_USD
from veranda_dagster.domain.core.budget import BudgetedAgent
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.spend_meter import SpendCap
from veranda_dagster.resources.orgs import orgs_from_env
from veranda_dagster.settings import env_number, setting
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.search_budget import (
    BudgetState,
    FileBudgetState,
    PostgresBudgetState,
)
from veranda_dagster.storage.value_stores import default_values_dir
from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.resolver import build_agent


class AgentsResource(Resource):
    """The agent vendors and the per-ticket spend cap, over the deployment's value store."""

    store: ValueStore
    """Where the spend ledger (and the forge's code-search budget) is kept: the value store's
    own storage, so a resumed run in another pod reads the same ledger."""
    vendors_file: str = ""
    """JSON/YAML ``VendorsConfig``; empty = every vendor in default order."""
    ticket_budget_usd: float = TICKET_BUDGET_USD
    """USD one ticket may spend on model turns (``VERANDA_TICKET_BUDGET_USD``)."""
    org_daily_budget_usd: dict[str, float] = Field(default_factory=dict)
    """Org (lower case) -> USD all its tickets may spend per UTC day (the orgs file's
    ``daily_budget_usd``); an org not listed has no daily cap."""

    @classmethod
    def from_env(cls, store: ValueStore) -> AgentsResource:
        orgs = orgs_from_env()
        return cls(
            store=store,
            vendors_file=setting("VERANDA_VENDORS_FILE"),
            ticket_budget_usd=env_number("VERANDA_TICKET_BUDGET_USD", TICKET_BUDGET_USD, float),
            org_daily_budget_usd={
                o.name.lower(): o.daily_budget_usd
                for o in (orgs.orgs if orgs else [])
                if o.daily_budget_usd is not None
            },
        )

    def ticket_cap_usd(self, ticket_id: str) -> float:
        """The deployment's cap, or the one raised for this ticket if higher."""
        raised = self.ledger().raised_cap(ticket_id)
        return max(self.ticket_budget_usd, raised or 0.0)

    def org_caps(self, org: str) -> list[SpendCap]:
        daily = self.org_daily_budget_usd.get(org.lower()) if org else None
        if daily is None:
            return []
        ledger = self.ledger()
        return [SpendCap(f"org {org} today", daily, lambda: ledger.org_spent(org), "org_daily")]

    def agent(
        self, ticket: Ticket, notify: Callable[[str], object], org: str = ""
    ) -> BudgetedAgent:
        """The resolving agent, held to the ticket's budget and its org's daily one (when the
        org is known: after ``repo_guess``); ``notify`` tells the ticket once when a cap is
        reached."""
        inner = build_agent(VendorsConfig.load(self.vendors_file or None))
        return BudgetedAgent(
            inner,
            ticket.id,
            self.ticket_cap_usd(ticket.id),
            self.ledger(),
            notify=notify,
            org=org.lower(),
            org_caps=self.org_caps(org),
        )

    def spend_metadata(self, ticket_id: str, org: str = "") -> dict[str, float]:
        """The ticket's spend and cap (and its org's today), as numbers the UI can chart."""
        ledger = self.ledger()
        out = {
            "ticket_spent_usd": ledger.spent(ticket_id),
            "ticket_cap_usd": self.ticket_cap_usd(ticket_id),
        }
        daily = self.org_daily_budget_usd.get(org.lower()) if org else None
        if daily is not None:
            out["org_spent_today_usd"] = ledger.org_spent(org)
            out["org_daily_cap_usd"] = daily
        return out

    def ledger(self) -> StoreLedger:
        return self.store.ledger()

    def budget_state(self) -> BudgetState:
        """Shared state for rate budgets: a file beside the values, or the store's database."""
        if self.store.store_kind == "postgres":
            return PostgresBudgetState(self.store.postgres_url)
        return FileBudgetState(self.store.base_dir or default_values_dir())
