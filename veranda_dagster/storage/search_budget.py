"""One code-search budget per forge token, shared by every run that uses the token.

GitHub counts code searches per token over a rolling minute (10 on github.com). A limiter built
inside one pack only sees its own requests, so four concurrent ticket runs (or a retried step)
could send 40 a minute against one token's 10. The budget's state (the send times of the last
minute, plus the slots packs have reserved but not spent) therefore lives where every run of
the deployment sees it: a locked JSON file beside the value store on one machine, a locked row
in the value store's PostgreSQL otherwise. The key is a hash of the API URL and the token, so
the token itself is never written down.

A pack *plans* with the budget: ``reserve`` grants what is free now (at most what it asked
for) and only waits when fewer than ``need`` slots are free; the wait is returned so the phase
can report it. A reservation that is never spent (a killed run) expires after
``SEARCH_CLAIM_TTL_S``, so a crash cannot leak the budget.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from veranda_dagster.domain.core.bounds import MAX_BUDGET_WAITS, SEARCH_CLAIM_TTL_S
from veranda_dagster.domain.core.errors import TransientError

RATE_WINDOW_S = 60.0
"""The rolling window a forge's code-search limit is counted over (GitHub's is a minute)."""

State = dict[str, Any]
"""``{"sent": [epoch seconds], "claims": {id: {"n": slots, "until": epoch seconds}}}``."""

T = TypeVar("T")


class BudgetState(Protocol):
    """Atomic read-modify-write of one budget's state across processes."""

    def transact(self, key: str, update: Callable[[State], T]) -> T:
        """Run ``update`` on the state (mutating it) under an exclusive lock; return its result."""
        ...


def budget_key(api_url: str, token: str) -> str:
    """The budget's name: the same token on the same forge is the same budget."""
    return hashlib.sha256(f"{api_url.rstrip('/')}\0{token}".encode()).hexdigest()[:24]


class MemoryBudgetState:
    """One process's budget (tests, and a client built without a shared store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, State] = {}

    def transact(self, key: str, update: Callable[[State], T]) -> T:
        with self._lock:
            return update(self._states.setdefault(key, {}))


class FileBudgetState:
    """``<root>/_search_budgets/<key>.json`` guarded by ``flock`` on a sibling lock file: every
    run on the machine (each a process of its own) serialises on the same lock."""

    def __init__(self, root: str | Path) -> None:
        self.folder = Path(root) / "_search_budgets"

    def transact(self, key: str, update: Callable[[State], T]) -> T:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{key}.json"
        fd = os.open(self.folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                state = json.loads(path.read_text(encoding="utf-8"))
            except (FileNotFoundError, json.JSONDecodeError):
                state = {}
            result = update(state)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state), encoding="utf-8")
            os.replace(tmp, path)
            return result
        finally:
            os.close(fd)  # releases the lock


BUDGET_TABLE = "veranda_search_budgets"

_BUDGET_DDL = f"""
CREATE TABLE IF NOT EXISTS {BUDGET_TABLE} (
    key text PRIMARY KEY,
    state jsonb NOT NULL DEFAULT '{{}}'::jsonb
)
"""


class PostgresBudgetState:
    """One row per budget, locked with ``SELECT … FOR UPDATE`` for the read-modify-write, so
    run pods that share only the database share the budget."""

    def __init__(self, url: str) -> None:
        self.url = url

    def transact(self, key: str, update: Callable[[State], T]) -> T:
        from veranda_dagster.storage.value_stores import pooled_connection

        with pooled_connection(self.url) as conn, conn, conn.cursor() as cur:
            cur.execute(_BUDGET_DDL)
            cur.execute(
                f"INSERT INTO {BUDGET_TABLE} (key) VALUES (%s) ON CONFLICT DO NOTHING", (key,)
            )
            cur.execute(f"SELECT state::text FROM {BUDGET_TABLE} WHERE key = %s FOR UPDATE", (key,))
            state = json.loads(cur.fetchone()[0])
            result = update(state)
            cur.execute(
                f"UPDATE {BUDGET_TABLE} SET state = %s::jsonb WHERE key = %s",
                (json.dumps(state), key),
            )
            return result


def _prune(state: State, now: float, period: float) -> tuple[list[float], dict[str, Any]]:
    sent = [t for t in state.get("sent", []) if t > now - period]
    claims = {k: c for k, c in state.get("claims", {}).items() if c["until"] > now and c["n"] > 0}
    state["sent"], state["claims"] = sent, claims
    return sent, claims


@dataclass
class Reservation:
    """Slots held for one pack: ``spend`` one per request, ``release`` the rest at the end."""

    budget: SearchBudget
    claim: str
    granted: int
    waited_s: float = 0.0
    spent: int = field(default=0)

    @property
    def left(self) -> int:
        return self.granted - self.spent

    def spend(self) -> None:
        """Record one request sent now; past the grant it is a plain (waiting) acquire."""
        if self.left <= 0:
            self.waited_s += self.budget.acquire()
            return
        self.spent += 1
        self.budget.record(self.claim)

    def release(self) -> None:
        self.budget.release(self.claim)


class SearchBudget:
    """At most ``limit`` searches in any ``period`` seconds for one key, across processes.

    Times are wall-clock epoch seconds (``clock``), the only clock separate processes share;
    ``sleep`` is injected with it so a test drives the budget with a fake clock."""

    def __init__(
        self,
        state: BudgetState,
        key: str,
        limit: int,
        period: float = RATE_WINDOW_S,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.state, self.key, self.limit, self.period = state, key, max(1, limit), period
        self._clock, self._sleep = clock, sleep
        self.waits: list[float] = []

    def _try(self, want: int, need: int, claim: str | None) -> tuple[int, float]:
        """``(slots granted, 0)`` or ``(0, seconds until enough are free)``, atomically (the
        clock is read under the lock, so a send is never stamped earlier than it happens)."""

        def update(state: State) -> tuple[int, float]:
            now = self._clock()
            sent, claims = _prune(state, now, self.period)
            free = self.limit - len(sent) - sum(c["n"] for c in claims.values())
            if free >= need or need == 0:
                grant = max(0, min(want, free))
                if claim is None:
                    state["sent"].append(now)
                elif grant:
                    until = now + SEARCH_CLAIM_TTL_S
                    state["claims"][claim] = {"n": grant, "until": until}
                return grant, 0.0
            # the oldest sends leave first; a held slot is about to be sent, so it leaves a
            # window after now at the earliest (or when its claim expires, if sooner)
            held = sum(c["n"] for c in claims.values())
            leaving = sorted(sent) + [now] * held
            leave = leaving[min(need - free, len(leaving)) - 1] + self.period
            expiry = min((c["until"] for c in claims.values()), default=leave)
            return 0, max(min(leave, expiry) - now, 0.001)

        return self.state.transact(self.key, update)

    def _wait_for(self, want: int, need: int, claim: str | None) -> tuple[int, float]:
        need = max(0, min(need, self.limit))  # 0: take what is free now, never wait
        waited = 0.0
        for _ in range(MAX_BUDGET_WAITS):
            granted, wait = self._try(want, need, claim)
            if wait == 0.0:
                return granted, waited
            self.waits.append(wait)
            self._sleep(wait)
            waited += wait
        raise TransientError(
            f"code-search budget still exhausted after {MAX_BUDGET_WAITS} waits ({waited:.0f} s)"
        )

    def reserve(self, want: int, need: int = 1) -> Reservation:
        """Hold up to ``want`` slots, waiting only while fewer than ``need`` are free (``need``
        0: whatever is free now, possibly none, without waiting)."""
        claim = uuid.uuid4().hex
        granted, waited = self._wait_for(want, need, claim)
        return Reservation(self, claim, granted, waited)

    def acquire(self) -> float:
        """One search sent now, waiting for a free slot first; returns the seconds waited."""
        return self._wait_for(1, 1, None)[1]

    def record(self, claim: str) -> None:
        """Turn one held slot of ``claim`` into a send at the current time."""

        def update(state: State) -> None:
            now = self._clock()
            _, claims = _prune(state, now, self.period)
            state["sent"].append(now)
            if claim in claims:
                claims[claim]["n"] -= 1

        self.state.transact(self.key, update)

    def release(self, claim: str) -> None:
        self.state.transact(self.key, lambda state: state.get("claims", {}).pop(claim, None))

    def sent(self) -> list[float]:
        """The send times inside the current window (for reports and tests)."""
        return self.state.transact(
            self.key, lambda s: list(_prune(s, self._clock(), self.period)[0])
        )


def own_budget(
    api_url: str,
    token: str | None,
    per_minute: int,
    *,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> SearchBudget:
    """A budget only one client draws from, for a client built without the shared one (a
    test, ``veranda pack``): kept in this process, keyed like the shared one."""
    return SearchBudget(
        MemoryBudgetState(), budget_key(api_url, token or ""), per_minute, clock=clock, sleep=sleep
    )


class PlannedSearches:
    """One search client's draw on its token's budget, the same for every forge's index.

    A pack without a clone calls ``plan`` once with what it would like and gets what the
    shared budget has free now (``need=0``: never a sleep); each request is then ``spend``-ed
    from that plan, and ``finish`` gives the unspent part back. A request past the plan (a
    caller that planned nothing) is a plain ``acquire``, which may wait, and the wait is added
    to ``waited_s`` so the phase reports it."""

    def __init__(self, budget: SearchBudget) -> None:
        self.budget = budget
        self._plan: Reservation | None = None
        self.waited_s = 0.0
        """Seconds slept for the budget (planning and past-plan requests)."""

    def plan(self, want: int, need: int = 1) -> int:
        """Reserve up to ``want`` searches and return how many may be sent without waiting;
        waits only while fewer than ``need`` are free."""
        self.finish()
        self._plan = self.budget.reserve(want, need)
        self.waited_s += self._plan.waited_s
        return self._plan.granted

    def finish(self) -> None:
        """Give the unspent part of the plan back to the other runs."""
        if self._plan is not None:
            self._plan.release()
            self._plan = None

    def spend(self) -> None:
        """Count one request sent now: from the plan, else through the (waiting) budget."""
        if self._plan is not None:
            before = self._plan.waited_s
            self._plan.spend()
            self.waited_s += self._plan.waited_s - before
        else:
            self.waited_s += self.budget.acquire()
