"""Issue 38: a second ticket in the same minute does not wait for the code-search budget.

GitHub allows 10 code searches a minute per token, shared by every run holding it. A pack that
spent them made the next ticket of the minute wait ~53 s in ``context_pack``, although the
phase already held a full clone. Here the token's budget is spent before two tickets of the
same repository are packed through the ``context_pack`` asset's call (a configured GitHub
forge on loopback, a shared file budget, real clones): both search their clones, neither sleeps, the
budget is left as it was, and the pack says which vendor answered.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.resources import phase_call
from veranda_dagster.domain.core.models import ContextPack, RepoGuess, Ticket
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sim.github_fake import GitHubFake
from veranda_dagster.sim.sample_org import BILLING, create_sample_org
from veranda_dagster.storage import ValueStore

TOKEN = "ghs_fake_github_token_38"
PACK_WALL_BOUND_S = 40.0
"""Far under the ~60 s a pack waited for a spent minute; a wait would cross it."""


def _ticket(key: str) -> tuple[Ticket, RepoGuess]:
    ticket = Ticket(
        id=key,
        source="linear",
        title="Invoice total ignores quantity",
        description="`invoice_total_cents` sums `unit_price_cents` but not the `LineItem` "
        "quantity, so two of a thing cost the price of one.",
    )
    guess = RepoGuess(
        ticket_id=key, repo=BILLING, confidence="high", signal="declaration", decision="proceed"
    )
    return ticket, guess


@pytest.mark.parametrize("sandbox", ["bwrap"])
def test_two_tickets_in_one_minute_search_their_clones_and_neither_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", sandbox)
    org = create_sample_org(tmp_path / "org")
    store = ValueStore(store_kind="filesystem", base_dir=str(tmp_path / "values"))
    with GitHubFake(org.git_base, token=TOKEN) as gh:
        forge = ForgeResource(api_url=gh.base_url, git_base=str(org.git_base), token=TOKEN)
        agents = AgentsResource(store=store)
        budget = forge.search_budget(agents.budget_state())
        for _ in range(forge.search_per_minute):
            budget.acquire()  # an earlier ticket spent the token's whole minute
        spent = budget.sent()
        workspace = WorkspaceResource(root=str(tmp_path / "ws"))
        packs = []
        for key in ("ENG-1", "ENG-2"):
            started = time.monotonic()
            ticket, guess = _ticket(key)
            pack = phase_call(
                "context_pack",
                ticket=ticket,
                repo_guess=guess,
                forge=forge,
                agents=agents,
                workspace=workspace,
            )
            assert isinstance(pack, ContextPack)
            packs.append(pack)
            assert time.monotonic() - started < PACK_WALL_BOUND_S
    for pack in packs:
        assert pack.search_index == "local_clone"
        assert pack.search_wait_s == 0.0
        assert pack.searches > 0 and "billing/invoice.py" in [f.path for f in pack.files]
        assert {c.sha for c in pack.citations} == {pack.base_sha}
    assert budget.sent() == spent  # not one search of the token's budget was spent or waited
