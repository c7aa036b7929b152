"""Spend metered per vendor request, while the turn is still running.

A turn's cost used to be recorded once the turn returned, so a turn that failed or was killed
after the vendor had billed its requests cost nothing in the ledger, and a turn that crossed the
cap always ran to its end. A ``TurnMeter`` is what the turn's credential proxy (which sees every
request the agent, its tools or its shell make to the vendor) reports to instead: before each
request it asks ``admit`` (every cap still has room?), and after each answer it ``charge``s the
usage the vendor's own answer carried, straight into the durable ledger. What is in the ledger
then does not depend on how the turn ends.

The meter of the turn in progress is found through a context variable (``metering`` /
``current_meter``), set by ``BudgetedAgent`` around the turn: the turn runs synchronously on the
thread that set it, down to the runner that starts the proxy, and nothing between the phase and
the runner has to carry it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from veranda_dagster.domain.core.models import Usage


@dataclass(frozen=True)
class SpendCap:
    """One limit a request must fit under: its name for the refusal, the limit, and how much
    has been spent against it so far (read from the durable ledger on every call)."""

    name: str
    """What the refusal names: ``ticket ENG-1``, ``org acme today``."""
    limit_usd: float
    spent: Callable[[], float]
    kind: str = "ticket"
    """``ticket`` (raised per ticket) or ``org_daily`` (the orgs file's, per UTC day)."""


@dataclass(frozen=True)
class Refusal:
    """Why a request was not started: the cap that was full and how much it held."""

    cap: str
    spent: float
    limit: float
    kind: str = "ticket"

    @property
    def reason(self) -> str:
        return (
            f"budget reached: {self.cap} has spent ${self.spent:.4f} of its "
            f"${self.limit:.2f} cap, so this model request was not started"
        )


Charge = Callable[[str, str | None, Usage, float], None]
"""(vendor, model, usage, usd) -> None: records one billed request durably."""


class TurnMeter:
    """One agent turn's running account; thread-safe (a CLI may send requests in parallel)."""

    def __init__(self, caps: Sequence[SpendCap], charge: Charge) -> None:
        self.caps = list(caps)
        self._charge = charge
        self._lock = threading.Lock()
        self.requests = 0
        self.usd = 0.0
        self.usage = Usage()
        self.unpriced = 0
        """Requests whose model has no rate: charged $0, so the turn falls back to the CLI's
        own cost for them when it returns (``BudgetedAgent``)."""
        self.refusal: Refusal | None = None

    def admit(self) -> Refusal | None:
        """``None`` when every cap has room for another request, else the refusal (kept: the
        turn's outcome is the budget's, however the CLI reports the refused request)."""
        for cap in self.caps:
            spent = cap.spent()
            if spent >= cap.limit_usd:
                refusal = Refusal(cap.name, spent, cap.limit_usd, cap.kind)
                with self._lock:
                    self.refusal = self.refusal or refusal
                return refusal
        return None

    def charge(self, vendor: str, model: str | None, usage: Usage, usd: float | None) -> None:
        """One answered request, into the ledger now (before the CLI has even read it all);
        ``usd`` ``None``: no rate is known for the model (charged $0, counted unpriced)."""
        self._charge(vendor, model, usage, usd or 0.0)
        with self._lock:
            self.unpriced += usd is None
            usd = usd or 0.0
            self.requests += 1
            self.usd = round(self.usd + usd, 6)
            self.usage = self.usage + usage


_CURRENT: ContextVar[TurnMeter | None] = ContextVar("veranda_turn_meter", default=None)


@contextmanager
def metering(meter: TurnMeter) -> Iterator[TurnMeter]:
    """Make ``meter`` the one the runner hands to this turn's proxy, for the block."""
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)


def current_meter() -> TurnMeter | None:
    """The meter of the turn running on this thread, if a budget is watching it."""
    return _CURRENT.get()
