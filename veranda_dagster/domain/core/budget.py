"""A dollar cap per ticket: no model turn starts once the ticket has spent its budget.

What a ticket has spent is read from a durable, append-only ledger with one entry per model
call, written the moment the call returns. It is not summed from the stored phase values,
because a phase that fails after paying for turns (a third rejected red test, a step killed
mid-patch) stores no value, yet its turns were billed; and it is not process memory, because a
resumed run (a new process, a new pod) must honour what the first one spent.

The check is before each turn and, through the turn's credential proxy, before each vendor
request inside it (``spend_meter``): the proxy charges every answer's usage to the ledger as the
answer ends, whether the turn later succeeds, fails or is killed, and refuses a request once a
cap is full, so a turn overshoots a cap by at most the request that crossed it. The refused turn
becomes ``BudgetExceededError`` (non-retryable: retrying cannot make money appear), after a
note on the ticket saying how much was spent and how to raise the cap. Values already
materialized stay as they are, so after raising the cap a re-execution from failure resumes
where the money ran out. A turn that reached no proxy (the sandbox off, a scripted runner) is
recorded from its reply when it returns, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel, Field

from veranda_dagster.domain.core.agent import AgentPort, AgentReply, AgentRequest
from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.domain.core.models import ModelCall, Usage
from veranda_dagster.domain.core.spend_meter import Refusal, SpendCap, TurnMeter, metering

BUDGET_ENV = "VERANDA_TICKET_BUDGET_USD"


class SpendEntry(BaseModel):
    """One paid model call, as the ledger keeps it."""

    role: str
    family: str
    model: str | None = None
    usd: float
    at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    source: str = "turn"
    """``proxy``: one vendor request, metered by the turn's proxy from the vendor's answer;
    ``turn``: a whole turn, from what the CLI reported when it returned."""
    tokens_in: int = 0
    tokens_out: int = 0

    @classmethod
    def of(cls, call: ModelCall) -> SpendEntry:
        return cls(
            role=call.role,
            family=call.family,
            model=call.model,
            usd=call.usd,
            tokens_in=call.usage.input + call.usage.cached,
            tokens_out=call.usage.output,
        )


class SpendLedger(Protocol):
    """Append-only, durable, per ticket (``storage.ValueStore.ledger`` is the real one)."""

    def spent(self, ticket_id: str) -> float: ...

    def record(self, ticket_id: str, entry: SpendEntry) -> None: ...


class BudgetExceededError(VerandaError):
    """The ticket has spent its budget; the next model turn was not started."""

    def __init__(
        self, ticket_id: str, role: str, spent: float, cap: float, unposted: str = ""
    ) -> None:
        self.ticket_id, self.spent, self.cap = ticket_id, spent, cap
        text = budget_note(ticket_id, role, spent, cap)
        super().__init__(
            f"{text} (the note on the ticket was not posted: {unposted})" if unposted else text
        )


def budget_note(ticket_id: str, role: str, spent: float, cap: float) -> str:
    """What the run's failure and the note on the ticket say: spent, cap, and the way on."""
    return (
        f"Stopped {ticket_id}: model turns have cost ${spent:.2f} of this ticket's "
        f"${cap:.2f} budget, so the {role} turn was not started. Nothing finished is lost: "
        f"raise {BUDGET_ENV} and re-execute the run from failure to continue from here."
    )


class BudgetedAgent:
    """An ``AgentPort`` that refuses a turn once the ticket's spend reaches ``cap_usd`` and
    records every turn's cost in the ledger before handing the reply back."""

    def __init__(
        self,
        inner: AgentPort,
        ticket_id: str,
        cap_usd: float,
        ledger: SpendLedger,
        notify: Callable[[str], object] | None = None,
    ) -> None:
        self.inner = inner
        self.ticket_id = ticket_id
        self.cap_usd = cap_usd
        self.ledger = ledger
        self.notify = notify

    def caps(self) -> list[SpendCap]:
        """What every turn and every request must fit under: the ticket's cap."""
        return [
            SpendCap(
                f"ticket {self.ticket_id}", self.cap_usd, lambda: self.ledger.spent(self.ticket_id)
            )
        ]

    def run(self, request: AgentRequest) -> AgentReply:
        meter = TurnMeter(self.caps(), lambda *billed: self._charge(request.role, *billed))
        refusal = meter.admit()
        if refusal is not None:
            raise self._refusal(request.role, refusal)
        with metering(meter):
            try:
                reply = self.inner.run(request)
            except Exception:
                if meter.refusal is not None:  # the proxy refused a request: the budget's doing
                    raise self._refusal(request.role, meter.refusal) from None
                raise
        if meter.requests:  # the proxy charged each request: the reply says what it charged
            call = reply.call.model_copy(update={"usd": meter.usd, "usage": meter.usage})
            return reply.model_copy(update={"call": call})
        self.ledger.record(self.ticket_id, SpendEntry.of(reply.call))
        return reply

    def _charge(self, role: str, family: str, model: str | None, usage: Usage, usd: float) -> None:
        entry = SpendEntry(
            role=role,
            family=family,
            model=model,
            usd=usd,
            source="proxy",
            tokens_in=usage.input + usage.cached,
            tokens_out=usage.output,
        )
        self.ledger.record(self.ticket_id, entry)

    def _refusal(self, role: str, refusal: Refusal) -> BudgetExceededError:
        """The error, after the note on the ticket; a note that cannot be posted is named in
        the error rather than hiding why the run stopped."""
        unposted = ""
        spent = self.ledger.spent(self.ticket_id)
        if self.notify is not None:
            try:
                self.notify(budget_note(self.ticket_id, role, spent, self.cap_usd))
            except Exception as exc:
                unposted = f"{type(exc).__name__}: {exc}"
        return BudgetExceededError(self.ticket_id, role, spent, self.cap_usd, unposted)

    def instruction_files(self) -> list[str]:
        return self.inner.instruction_files()

    def mcp_formats(self) -> list[str]:
        return self.inner.mcp_formats()
