"""``AgentsResource``: the vendor coding CLIs a ticket's turns go to, and what they may spend.

The backends file (``VERANDA_BACKENDS_FILE``) picks and orders the vendor families; every
phase's turns for one ticket go through one ``BudgetedAgent`` that reads and writes the
ticket's durable spend ledger in the value store, capped at ``VERANDA_TICKET_BUDGET_USD``.
The vendors' own keys are not config fields: each adapter declares its secret variables and
reads them from the worker's environment when it builds its CLI's (``vendors/registry``), so
they never pass through Dagster config at all.
"""

from __future__ import annotations

from collections.abc import Callable

from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.core.bounds import TICKET_BUDGET_USD
from veranda_dagster.domain.core.budget import BudgetedAgent
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.resources._env import setting
from veranda_dagster.settings import env_number
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.io_manager import default_values_dir
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.search_budget import (
    BudgetState,
    FileBudgetState,
    PostgresBudgetState,
)
from veranda_dagster.vendors.config import BackendsConfig
from veranda_dagster.vendors.resolver import build_agent


class AgentsResource(Resource):
    """The agent backends and the per-ticket spend cap, over the deployment's value store."""

    store: ValueStore
    """Where the spend ledger (and the forge's code-search budget) is kept: the value store's
    own backend, so a resumed run in another pod reads the same ledger."""
    backends_file: str = ""
    """JSON/YAML ``BackendsConfig``; empty = every family in default order."""
    ticket_budget_usd: float = TICKET_BUDGET_USD
    """USD one ticket may spend on model turns (``VERANDA_TICKET_BUDGET_USD``)."""

    @classmethod
    def from_env(cls, store: ValueStore) -> AgentsResource:
        return cls(
            store=store,
            backends_file=setting("VERANDA_BACKENDS_FILE"),
            ticket_budget_usd=env_number("VERANDA_TICKET_BUDGET_USD", TICKET_BUDGET_USD, float),
        )

    def agent(self, ticket: Ticket, notify: Callable[[str], object]) -> BudgetedAgent:
        """The resolving agent, held to the ticket's budget; ``notify`` tells the ticket once
        when the cap is reached."""
        inner = build_agent(BackendsConfig.load(self.backends_file or None))
        return BudgetedAgent(inner, ticket.id, self.ticket_budget_usd, self.ledger(), notify=notify)

    def ledger(self) -> StoreLedger:
        return self.store.ledger()

    def budget_state(self) -> BudgetState:
        """Shared state for rate budgets: a file beside the values, or the store's database."""
        if self.store.backend == "postgres":
            return PostgresBudgetState(self.store.postgres_url)
        return FileBudgetState(self.store.base_dir or default_values_dir())
