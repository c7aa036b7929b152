"""Issue 38: GitLab's blob search is planned within the token's shared budget like GitHub's.

Against the GitLab fake (real bare repositories, blob search by ``git grep``):

* a pack without a clone asks the budget what is free *now* and searches within it: with the
  token's minute almost spent it sends exactly what was free, never sleeps, gives the unspent
  part back, and says ``forge_index``;
* a pack whose budget is spent packs from what needs no search, still without a sleep;
* through the ``context_pack`` phase (a configured GitLab forge, a real clone), two tickets
  of one repository in one minute search their clones: ``local_clone``, no wait, and the
  token's budget untouched.
"""

from __future__ import annotations

import time
from contextlib import ExitStack, closing
from pathlib import Path

import pytest

from tests.support.resources import phase_call
from veranda_dagster.domain.context.pack import _pack
from veranda_dagster.domain.context.search_choice import search_for_pack
from veranda_dagster.domain.core.bounds import FORGE_BLOB_SEARCH_PER_MINUTE, MAX_SEARCHES
from veranda_dagster.domain.core.models import ContextPack, RepoGuess, Ticket
from veranda_dagster.forges.gitlab.code_search import GitLabCodeSearch
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sim.gitlab_fake import GitLabFake
from veranda_dagster.sim.sample_org import BILLING, create_sample_org
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.search_budget import FileBudgetState, SearchBudget, budget_key

TOKEN = "glpat-fake_gitlab_token_38_abcdefgh"
PACK_WALL_BOUND_S = 40.0
"""Far under the minute a pack would wait for a spent budget; a wait would cross it."""


def _ticket(key: str) -> Ticket:
    return Ticket(
        id=key,
        source="linear",
        title="Invoice total ignores quantity",
        description="`invoice_total_cents` sums `unit_price_cents` but not the `LineItem` "
        "quantity, so two of a thing cost the price of one.",
    )


def _never_sleep(seconds: float) -> None:
    raise AssertionError(f"the pack slept {seconds:.1f}s for the search budget")


def _budget(tmp_path: Path, api_url: str) -> SearchBudget:
    return SearchBudget(
        FileBudgetState(tmp_path / "budgets"),
        budget_key(api_url, TOKEN),
        FORGE_BLOB_SEARCH_PER_MINUTE,
        sleep=_never_sleep,
    )


@pytest.mark.parametrize("free", [3, 0])
def test_a_pack_without_a_clone_plans_gitlab_search_within_what_is_free(
    tmp_path: Path, free: int
) -> None:
    org = create_sample_org(tmp_path / "org")
    ticket = _ticket("ENG-1")
    with GitLabFake(org.git_base, token=TOKEN) as gl, ExitStack() as stack:
        budget = _budget(tmp_path, gl.base_url)
        for _ in range(FORGE_BLOB_SEARCH_PER_MINUTE - free):
            budget.acquire()  # other tickets spent the rest of the token's minute
        before = len(budget.sent())
        index = stack.enter_context(
            closing(GitLabCodeSearch(gl.base_url, TOKEN, BILLING, budget=budget))
        )
        search, kind = search_for_pack(index, None, "")
        assert kind == "forge_index" and search is index
        started = time.monotonic()
        pack, planned = _pack([ticket.title, ticket.description], search, ticket)
        assert time.monotonic() - started < PACK_WALL_BOUND_S
    assert planned == min(free, MAX_SEARCHES)
    assert pack.searches == len(index.calls) <= planned  # never past the plan
    assert len(budget.sent()) == before + len(index.calls) <= FORGE_BLOB_SEARCH_PER_MINUTE
    assert index.waited_s == 0.0 and budget.waits == []
    assert budget.reserve(FORGE_BLOB_SEARCH_PER_MINUTE, 0).granted == free - len(index.calls)
    if free:
        assert "billing/invoice.py" in [f.path for f in pack.files]


def test_two_gitlab_tickets_in_one_minute_search_their_clones_and_neither_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")
    org = create_sample_org(tmp_path / "org")
    store = ValueStore(store_kind="filesystem", base_dir=str(tmp_path / "values"))
    with GitLabFake(org.git_base, token=TOKEN) as gl:
        forge = ForgeResource(
            forge="gitlab", api_url=gl.base_url, git_base=str(org.git_base), token=TOKEN
        )
        agents = AgentsResource(store=store)
        budget = forge.search_budget(agents.budget_state())
        for _ in range(forge.search_per_minute):
            budget.acquire()  # an earlier ticket spent the token's whole minute
        spent = budget.sent()
        workspace = WorkspaceResource(root=str(tmp_path / "ws"))
        packs = []
        for key in ("ENG-1", "ENG-2"):
            started = time.monotonic()
            guess = RepoGuess(
                ticket_id=key,
                repo=BILLING,
                confidence="high",
                signal="declaration",
                decision="proceed",
            )
            pack = phase_call(
                "context_pack",
                ticket=_ticket(key),
                repo_guess=guess,
                forge=forge,
                agents=agents,
                workspace=workspace,
            )
            assert isinstance(pack, ContextPack)
            packs.append(pack)
            assert time.monotonic() - started < PACK_WALL_BOUND_S
    for pack in packs:
        assert pack.search_index == "local_clone" and pack.search_wait_s == 0.0
        assert pack.searches > 0 and "billing/invoice.py" in [f.path for f in pack.files]
    assert budget.sent() == spent  # not one search of the token's budget was spent
