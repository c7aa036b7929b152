"""One code-search budget per token, shared by concurrent packs through its persisted state."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from tests.storage.sim_clock import SimClock
from veranda_dagster.domain.context.pack import _pack
from veranda_dagster.domain.core.bounds import MAX_BUDGET_WAITS, MAX_SEARCHES, SEARCH_CLAIM_TTL_S
from veranda_dagster.domain.core.errors import TransientError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.forges.github.code_search import GitHubCodeSearch
from veranda_dagster.forges.github.limits import GITHUB_CODE_SEARCH_PER_MINUTE
from veranda_dagster.storage.search_budget import (
    RATE_WINDOW_S,
    FileBudgetState,
    MemoryBudgetState,
    PostgresBudgetState,
    SearchBudget,
    budget_key,
)

SHA = "0" * 40
TOKEN = "ghs_shared_token"
# plenty of identifiers that match nothing, so every pack spends all the searches it may
TEXTS = [
    "LoginButton renders twice",
    " ".join(
        f"`fetchUser{i}` calls `refresh_token_{i}` in src/auth/session{i}.ts" for i in range(12)
    ),
]


TICKET = Ticket(id="ENG-19", source="linear", title=TEXTS[0], description=TEXTS[1])
NEED = 4
"""What a caller that would rather wait than search less asks ``reserve`` for."""


class Forge:
    """``/search/code`` answering nothing, stamping every request with the fake clock."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.sent: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/search/code"
        with self._lock:
            self.sent.append(self.clock())
        return httpx.Response(200, json={"total_count": 0, "items": []})


def _most_in_any_window(stamps: list[float]) -> int:
    stamps = sorted(stamps)
    return max(
        (sum(1 for t in stamps if start <= t < start + RATE_WINDOW_S) for start in stamps),
        default=0,
    )


def _run_packs(state, packs: int) -> tuple[Forge, list[tuple[int, int, float]], SimClock]:
    clock = SimClock(packs)
    forge = Forge(clock)
    results: list[tuple[int, int, float]] = []
    errors: list[BaseException] = []

    def one_pack() -> None:
        try:
            budget = SearchBudget(
                state,
                budget_key("https://api.github.test", TOKEN),
                GITHUB_CODE_SEARCH_PER_MINUTE,
                clock=clock,
                sleep=clock.sleep,
            )
            search = GitHubCodeSearch(
                "https://api.github.test",
                TOKEN,
                "acme/web",
                transport=httpx.MockTransport(forge),
                sha=SHA,
                contents=lambda _p: None,
                budget=budget,
            )
            pack, planned = _pack(TEXTS, search, TICKET)
            results.append((pack.searches, planned, search.waited_s))
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)
        finally:
            clock.done()

    threads = [threading.Thread(target=one_pack) for _ in range(packs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert len(results) == packs
    return forge, results, clock


def test_four_concurrent_packs_never_exceed_one_tokens_budget_and_never_wait(tmp_path: Path):
    """Packs without a clone plan with what the token has free now: together they stay within
    the budget, and none sleeps for a slot (issue 38: no waits on the critical path)."""
    forge, results, clock = _run_packs(FileBudgetState(tmp_path), 4)
    assert _most_in_any_window(forge.sent) <= GITHUB_CODE_SEARCH_PER_MINUTE
    # each pack searched only what its plan allowed
    for searches, planned, _ in results:
        assert 0 <= planned <= MAX_SEARCHES
        assert searches == planned
    assert sum(r[0] for r in results) == len(forge.sent) == GITHUB_CODE_SEARCH_PER_MINUTE
    # nobody waited: the packs that found the budget spent packed without searching
    assert [r[2] for r in results] == [0.0] * 4 and clock.sleeps == []
    assert sorted(r[1] for r in results)[0] == 0


def test_a_per_call_budget_would_overspend_the_token(tmp_path: Path):
    """The failure the shared state prevents: four packs with private budgets send 4x."""

    class PrivateState:
        def __init__(self) -> None:
            self._local = threading.local()

        def transact(self, key, update):
            if not hasattr(self._local, "state"):
                self._local.state = MemoryBudgetState()
            return self._local.state.transact(key, update)

    forge, _, _ = _run_packs(PrivateState(), 4)
    assert _most_in_any_window(forge.sent) > GITHUB_CODE_SEARCH_PER_MINUTE


def test_a_pack_plans_with_what_is_free_instead_of_sleeping(tmp_path: Path):
    clock = SimClock(1)
    budget = SearchBudget(
        FileBudgetState(tmp_path),
        "k",
        GITHUB_CODE_SEARCH_PER_MINUTE,
        clock=clock,
        sleep=clock.sleep,
    )
    for _ in range(4):
        budget.acquire()  # another run spent 4 of the 10 a moment ago
    plan = budget.reserve(MAX_SEARCHES, NEED)
    assert (plan.granted, plan.waited_s, clock.sleeps) == (6, 0.0, [])
    # held slots count against every other run until spent or released
    other = SearchBudget(
        FileBudgetState(tmp_path),
        "k",
        GITHUB_CODE_SEARCH_PER_MINUTE,
        clock=clock,
        sleep=clock.sleep,
    )
    later = other.reserve(MAX_SEARCHES, 1)  # nothing free: waits for the four sends to leave
    assert (later.granted, later.waited_s) == (4, pytest.approx(RATE_WINDOW_S))


def test_a_killed_runs_reservation_expires(tmp_path: Path):
    clock = SimClock(1)
    budget = SearchBudget(
        FileBudgetState(tmp_path),
        "k",
        GITHUB_CODE_SEARCH_PER_MINUTE,
        clock=clock,
        sleep=clock.sleep,
    )
    held = budget.reserve(MAX_SEARCHES)  # never spent, never released: the run died
    assert held.granted == GITHUB_CODE_SEARCH_PER_MINUTE
    plan = budget.reserve(MAX_SEARCHES, NEED)
    assert plan.waited_s == pytest.approx(SEARCH_CLAIM_TTL_S)
    assert plan.granted == GITHUB_CODE_SEARCH_PER_MINUTE


def test_the_budget_file_names_no_token(tmp_path: Path):
    budget = SearchBudget(
        FileBudgetState(tmp_path), budget_key("https://x", TOKEN), GITHUB_CODE_SEARCH_PER_MINUTE
    )
    budget.acquire()
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    names = " ".join(str(p) for p in tmp_path.rglob("*"))
    assert TOKEN not in written + names
    assert len(budget.sent()) == 1


def test_the_postgres_budget_is_shared_through_the_database(postgres_url: str):
    clock = SimClock(1)
    one = SearchBudget(
        PostgresBudgetState(postgres_url),
        "pg",
        GITHUB_CODE_SEARCH_PER_MINUTE,
        clock=clock,
        sleep=clock.sleep,
    )
    two = SearchBudget(
        PostgresBudgetState(postgres_url),
        "pg",
        GITHUB_CODE_SEARCH_PER_MINUTE,
        clock=clock,
        sleep=clock.sleep,
    )
    assert one.reserve(7).granted == 7
    plan = two.reserve(MAX_SEARCHES, 1)
    assert plan.granted == GITHUB_CODE_SEARCH_PER_MINUTE - 7
    plan.spend()
    plan.release()
    assert len(one.sent()) == 1


@pytest.mark.parametrize(
    ("outbids", "gives_up"),
    [(None, True), (3, False)],
    ids=["outbid-every-time-gives-up", "outbid-three-times-then-served"],
)
def test_a_run_outbid_for_every_freed_slot_gives_up_after_max_budget_waits(
    tmp_path: Path, outbids: int | None, gives_up: bool
):
    """A slot frees, and another run takes it before this one wakes, again and again: after
    ``MAX_BUDGET_WAITS`` waits the search is a transient failure instead of a wait without
    end; its twin, outbid three times, is served on its fourth wait."""
    now = [1_000_000.0]
    state = MemoryBudgetState()
    rival = SearchBudget(state, "k", 1, clock=lambda: now[0], sleep=_never_sleeps)
    rival.acquire()
    taken = [0]

    def sleep(seconds: float) -> None:
        now[0] += seconds
        if outbids is None or taken[0] < outbids:
            rival.acquire()  # the freed slot goes to the other run first
            taken[0] += 1

    budget = SearchBudget(state, "k", 1, clock=lambda: now[0], sleep=sleep)
    if gives_up:
        with pytest.raises(TransientError, match=f"after {MAX_BUDGET_WAITS} waits"):
            budget.acquire()
        assert len(budget.waits) == MAX_BUDGET_WAITS
    else:
        assert outbids is not None
        budget.acquire()
        assert len(budget.waits) == outbids + 1


def _never_sleeps(seconds: float) -> None:
    raise AssertionError(f"the rival found no free slot ({seconds} s)")
