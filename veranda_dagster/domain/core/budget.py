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

Beside the ticket's cap, an org may have a daily cap (``daily_budget_usd`` in the orgs file),
checked the same way against what every ticket of the org spent that UTC day. The ticket's cap
is raised for one ticket with ``veranda budget raise`` (``storage.ledger``), without touching
the deployment's default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel, Field

from veranda_dagster.domain.core.agent import AgentPort, AgentReply, AgentRequest
from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.domain.core.models import ModelCall, Usage
from veranda_dagster.domain.core.provenance import current_phase
from veranda_dagster.domain.core.spend_meter import Refusal, SpendCap, TurnMeter, metering

BUDGET_ENV = "VERANDA_TICKET_BUDGET_USD"
RAISE_COMMAND = "veranda budget raise"


class SpendEntry(BaseModel):
    """One paid model request (or, without a proxy, one turn), as the ledger keeps it."""

    role: str
    vendor: str
    model: str | None = None
    usd: float
    at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    source: str = "turn"
    """``proxy``: one vendor request, metered by the turn's proxy from the vendor's answer;
    ``turn``: a whole turn, from what the CLI reported when it returned (no proxy);
    ``cli_cost``: what the CLI's own cost of a turn adds over its metered requests, when some
    of them named a model with no rate."""
    tokens_in: int = 0
    tokens_out: int = 0
    phase: str = ""
    """The phase whose turn made the request (empty outside a Dagster run)."""
    org: str = ""
    """The org of the ticket's repository, once known: its daily cap counts this entry."""

    @classmethod
    def of(cls, call: ModelCall, org: str = "") -> SpendEntry:
        return cls(
            role=call.role,
            vendor=call.vendor,
            model=call.model,
            usd=call.usd,
            tokens_in=call.usage.input + call.usage.cached,
            tokens_out=call.usage.output,
            phase=current_phase(),
            org=org,
        )


class SpendLedger(Protocol):
    """Append-only, durable, per ticket (``storage.ValueStore.ledger`` is the real one)."""

    def spent(self, ticket_id: str) -> float: ...

    def record(self, ticket_id: str, entry: SpendEntry) -> None: ...

    def entries(self, ticket_id: str) -> list[SpendEntry]: ...


def spent_by_phase(entries: Sequence[SpendEntry]) -> dict[str, float]:
    """USD per phase (by seat where no phase was recorded), in the order first spent."""
    out: dict[str, float] = {}
    for e in entries:
        key = e.phase or f"{e.role} turns"
        out[key] = round(out.get(key, 0.0) + e.usd, 6)
    return out


class BudgetExceededError(VerandaError):
    """A spend cap is full; the next model turn (or request) was not started."""

    def __init__(
        self,
        ticket_id: str,
        role: str,
        spent: float,
        cap: float,
        unposted: str = "",
        note: str = "",
    ) -> None:
        self.ticket_id, self.spent, self.cap = ticket_id, spent, cap
        text = note or budget_note(ticket_id, role, spent, cap)
        super().__init__(
            f"{text} (the note on the ticket was not posted: {unposted})" if unposted else text
        )


def budget_note(
    ticket_id: str,
    role: str,
    spent: float,
    cap: float,
    by_phase: dict[str, float] | None = None,
    refusal: Refusal | None = None,
) -> str:
    """What the run's failure and the note on the ticket say: spent (per phase), the cap that
    is full, and the way on."""
    phases = ", ".join(f"{k} ${v:.4f}" for k, v in (by_phase or {}).items())
    spent_line = f" Spent per phase: {phases}." if phases else ""
    if refusal is not None and refusal.kind == "org_daily":
        return (
            f"Stopped {ticket_id}: {refusal.cap} has spent ${refusal.spent:.2f} of its "
            f"${refusal.limit:.2f} daily budget (UTC day), so the {role} turn was not "
            f"started.{spent_line} Nothing finished is lost: raise daily_budget_usd for the org "
            "in the orgs file (VERANDA_ORGS) or wait for the next UTC day, then re-execute the "
            "run from failure to continue from here."
        )
    return (
        f"Stopped {ticket_id}: model turns have cost ${spent:.2f} of this ticket's "
        f"${cap:.2f} budget, so the {role} turn was not started.{spent_line} Nothing finished "
        f"is lost: raise this ticket's cap with `{RAISE_COMMAND} {ticket_id} --to <usd>` (or "
        f"{BUDGET_ENV} for every ticket) and re-execute the run from failure to continue "
        "from here."
    )


class BudgetedAgent:
    """An ``AgentPort`` that refuses a turn, and has the turn's proxy refuse a request, once
    the ticket's spend reaches ``cap_usd`` (or its org's daily spend its ``org_caps``), and
    records what each request (or, without a proxy, each turn) cost in the ledger."""

    def __init__(
        self,
        inner: AgentPort,
        ticket_id: str,
        cap_usd: float,
        ledger: SpendLedger,
        notify: Callable[[str], object] | None = None,
        *,
        org: str = "",
        org_caps: Sequence[SpendCap] = (),
    ) -> None:
        self.inner = inner
        self.ticket_id = ticket_id
        self.cap_usd = cap_usd
        self.ledger = ledger
        self.notify = notify
        self.org = org
        self.org_caps = list(org_caps)

    def caps(self) -> list[SpendCap]:
        """What every turn and every request must fit under: the ticket's cap, the org's."""
        ticket = SpendCap(
            f"ticket {self.ticket_id}", self.cap_usd, lambda: self.ledger.spent(self.ticket_id)
        )
        return [ticket, *self.org_caps]

    def run(self, request: AgentRequest) -> AgentReply:
        phase = current_phase()  # read here: the proxy charges from its own threads
        meter = TurnMeter(self.caps(), lambda *billed: self._charge(request.role, phase, *billed))
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
            usd = meter.usd + self._unpriced(request.role, phase, meter, reply.call)
            call = reply.call.model_copy(update={"usd": round(usd, 6), "usage": meter.usage})
            return reply.model_copy(update={"call": call})
        self.ledger.record(self.ticket_id, SpendEntry.of(reply.call, self.org))
        return reply

    def _unpriced(self, role: str, phase: str, meter: TurnMeter, call: ModelCall) -> float:
        """When some of the turn's requests named a model with no rate, the turn's cost as the
        resolver had it (the CLI's own, for a CLI that prices its models) is the better figure:
        what it adds over the metered total goes in the ledger as one ``cli_cost`` entry."""
        extra = round(call.usd - meter.usd, 6) if meter.unpriced else 0.0
        if extra <= 0:
            return 0.0
        entry = SpendEntry.of(call, self.org).model_copy(
            update={"usd": extra, "source": "cli_cost", "phase": phase, "role": role}
        )
        self.ledger.record(self.ticket_id, entry)
        return extra

    def _charge(
        self, role: str, phase: str, vendor: str, model: str | None, usage: Usage, usd: float
    ) -> None:  # the meter passes $0 for an unpriced request
        entry = SpendEntry(
            role=role,
            vendor=vendor,
            model=model,
            usd=usd,
            source="proxy",
            tokens_in=usage.input + usage.cached,
            tokens_out=usage.output,
            phase=phase,
            org=self.org,
        )
        self.ledger.record(self.ticket_id, entry)

    def _refusal(self, role: str, refusal: Refusal) -> BudgetExceededError:
        """The error, after the note on the ticket; a note that cannot be posted is named in
        the error rather than hiding why the run stopped."""
        unposted = ""
        spent = self.ledger.spent(self.ticket_id)
        by_phase = spent_by_phase(self.ledger.entries(self.ticket_id))
        note = budget_note(self.ticket_id, role, spent, self.cap_usd, by_phase, refusal)
        if self.notify is not None:
            try:
                self.notify(note)
            except Exception as exc:
                unposted = f"{type(exc).__name__}: {exc}"
        return BudgetExceededError(self.ticket_id, role, spent, self.cap_usd, unposted, note)

    def instruction_files(self) -> list[str]:
        return self.inner.instruction_files()

    def mcp_formats(self) -> list[str]:
        return self.inner.mcp_formats()
