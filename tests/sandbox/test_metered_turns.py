"""Whole agent turns metered where the money is spent: ``BudgetedAgent`` over the product's
resolver, Claude vendor and ``SubprocessRunner`` with the sandbox required, the turn's CLI
(the ``veranda-sim-agent`` stand-in, or a hostile wrapper around it) reaching the scripted
model server only through the turn's credential proxy.

In every case the ledger equals what the model server billed (its own count of the usage of
every answer it produced) and the cap is exceeded by at most one request's cost: a follow-up
request that fails, a turn killed at its time bound, an agent that calls the API itself, a
request refused at the cap, and a re-execution after a failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from veranda_dagster.domain.core.agent import AgentRequest
from veranda_dagster.domain.core.budget import BudgetedAgent, BudgetExceededError
from veranda_dagster.sandbox import SANDBOX_ENV, Sandbox
from veranda_dagster.sim.model_server import ScriptedModelServer
from veranda_dagster.sim.sample_org import BILLING, SampleOrg, create_sample_org
from veranda_dagster.sim.sim_vendors import (
    agent_binary,
    model_credentials,
    sim_environ,
    sim_vendors_config,
)
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.value_stores import FilesystemValues
from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.health import HealthCache
from veranda_dagster.vendors.port import VendorError
from veranda_dagster.vendors.resolver import ResolvingAgent, build_agent

TICKET = "ENG-37"

if Sandbox("bwrap").unavailable() is not None:
    pytest.fail(f"bubblewrap is required here: {Sandbox('bwrap').unavailable()}")


@pytest.fixture(autouse=True)
def sandbox_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SANDBOX_ENV, "bwrap")


@pytest.fixture(scope="module")
def sample_org(tmp_path_factory: pytest.TempPathFactory) -> SampleOrg:
    return create_sample_org(Path(tmp_path_factory.mktemp("org")) / "org")


@pytest.fixture()
def model() -> Iterator[ScriptedModelServer]:
    keys, tokens = model_credentials()
    with ScriptedModelServer(api_keys=keys, oauth_tokens=tokens) as server:
        yield server


@pytest.fixture()
def ledger(tmp_path: Path) -> StoreLedger:
    return StoreLedger(FilesystemValues(tmp_path / "values"))


def clone(org: SampleOrg, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(org.bare(BILLING)), str(dest)], check=True)
    return dest


def resolver(model: ScriptedModelServer, tmp: Path, binary: str | None = None) -> ResolvingAgent:
    doc = sim_vendors_config(model.base_url, binary or agent_binary(tmp), with_glm=False)
    env = sim_environ({"PATH": os.environ["PATH"], "HOME": str(tmp)})
    return build_agent(VendorsConfig.model_validate(doc), environ=env, health=HealthCache())


def implement(repo: Path, timeout_s: float = 120.0) -> AgentRequest:
    return AgentRequest(
        role="implementer",
        tier="high",
        prompt="Role: implementer\nFix it.",
        workdir=str(repo),
        timeout_s=timeout_s,
    )


def test_a_failing_follow_up_request_is_in_the_ledger_and_a_re_execution_pays_only_again(
    model: ScriptedModelServer, ledger: StoreLedger, sample_org: SampleOrg, tmp_path: Path
) -> None:
    """The implementer's first request is answered (and billed), its follow-up fails every
    time: the turn fails, yet the ledger holds exactly what the model billed. Re-executed, the
    turn succeeds; the ledger is again what was billed, and the reply's cost is what the
    proxy charged for this turn alone."""
    repo = clone(sample_org, tmp_path / "c")
    agent = BudgetedAgent(resolver(model, tmp_path), TICKET, 10.0, ledger)
    model.fail_role("implementer", 500, times=2, step=1)  # the CLI retries once
    with pytest.raises(VendorError):
        agent.run(implement(repo))
    assert model.billed_usd("implementer") > 0
    assert ledger.spent(TICKET) == model.billed_usd()
    before = ledger.spent(TICKET)

    reply = agent.run(implement(repo))
    assert ledger.spent(TICKET) == model.billed_usd()
    assert reply.call.usd == round(ledger.spent(TICKET) - before, 6) > 0
    assert {e.source for e in ledger.entries(TICKET)} == {"proxy"}


def test_a_turn_killed_at_its_time_bound_keeps_what_was_billed(
    model: ScriptedModelServer, ledger: StoreLedger, sample_org: SampleOrg, tmp_path: Path
) -> None:
    repo = clone(sample_org, tmp_path / "c")
    agent = BudgetedAgent(resolver(model, tmp_path), TICKET, 10.0, ledger)
    held = model.block("implementer", step=1)
    try:
        with pytest.raises(VendorError) as failed:
            agent.run(implement(repo, timeout_s=8))
        assert failed.value.verdict == "timeout", failed.value
        assert held.is_set()
        assert model.billed_usd("implementer") > 0  # its first request was answered
        assert ledger.spent(TICKET) == model.billed_usd()
    finally:
        model.release("implementer")


HOSTILE = r"""
import json, os, urllib.request
base, key = os.environ["ANTHROPIC_BASE_URL"].rstrip("/"), os.environ["ANTHROPIC_API_KEY"]
for n in range(CALLS):
    body = {"model": "claude-opus-sim", "max_tokens": 64000,
            "messages": [{"role": "user", "content": "Role: simplifier\n" + "x" * 40000}]}
    req = urllib.request.Request(base + "/v1/messages", data=json.dumps(body).encode(),
                                 headers={"x-api-key": key, "content-type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()
"""


def hostile_binary(tmp: Path, calls: int) -> str:
    """Claude Code whose agent first calls the model API itself, ``calls`` times with a large
    prompt, with the key it finds in its environment, then runs its normal turn (whose usage
    report knows nothing of those calls)."""
    script = tmp / "hostile.py"
    script.write_text(HOSTILE.replace("CALLS", str(calls)))
    inner = agent_binary(tmp)
    wrapper = tmp / "hostile-agent"
    wrapper.write_text(
        f'#!/bin/sh\n"{sys.executable}" -I -c "$(cat {script})" || exit 3\nexec "{inner}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)


def test_the_agent_calling_the_api_itself_is_metered_through_the_proxy(
    model: ScriptedModelServer, ledger: StoreLedger, sample_org: SampleOrg, tmp_path: Path
) -> None:
    repo = clone(sample_org, tmp_path / "c")
    inner = resolver(model, tmp_path, hostile_binary(tmp_path, calls=3))
    reply = BudgetedAgent(inner, TICKET, 10.0, ledger).run(implement(repo))
    direct = model.billed_usd("simplifier")
    # three from the health probe's run of the CLI (inside the turn, so metered), three more
    assert len(model.conversation("simplifier")) == 6 and direct > 0
    assert ledger.spent(TICKET) == model.billed_usd()
    assert reply.call.usd == ledger.spent(TICKET)  # not the CLI's own, smaller, report


def test_a_request_past_the_cap_is_refused_and_the_turn_ends_in_the_budget_outcome(
    model: ScriptedModelServer, ledger: StoreLedger, sample_org: SampleOrg, tmp_path: Path
) -> None:
    """Calibrated on one free turn (same agent, so no second health probe): the cap is half
    the implementer's first answer, so that answer crosses it and the turn's next request is
    refused by the proxy before it reaches the model. The turn ends in ``BudgetExceededError``
    with a note, no vendor is marked unhealthy, and the overshoot is at most the crossing
    request."""
    repo = clone(sample_org, tmp_path / "c")
    inner = resolver(model, tmp_path)
    BudgetedAgent(inner, "ENG-0", 10.0, ledger).run(implement(clone(sample_org, tmp_path / "d")))
    answers = [b for b in model.billed if b.role == "implementer"]
    assert len(answers) >= 2, "the calibration turn must make at least two requests"
    billed_before, reached_before = model.billed_usd(), len(model.conversation("implementer"))
    cap = round(answers[0].usd / 2, 6)

    notes: list[str] = []
    agent = BudgetedAgent(inner, TICKET, cap, ledger, notify=notes.append)
    with pytest.raises(BudgetExceededError) as stopped:
        agent.run(implement(repo))
    spent = ledger.spent(TICKET)
    assert spent == round(model.billed_usd() - billed_before, 6) > cap
    assert spent - cap <= max(b.usd for b in answers)
    assert len(model.conversation("implementer")) == reached_before + 1  # the refused one: never
    assert "budget" in str(stopped.value) and len(notes) == 1
    assert all(inner.health.verdict(b).verdict == "ok" for b in inner.vendors)
    with pytest.raises(BudgetExceededError):  # the next turn does not even start
        agent.run(implement(repo))
    assert len(model.conversation("implementer")) == reached_before + 1


def test_parallel_requests_of_one_turn_are_all_metered(
    model: ScriptedModelServer, ledger: StoreLedger, sample_org: SampleOrg, tmp_path: Path
) -> None:
    """Sub-agents: the agent's own calls run in parallel threads; each is charged once."""
    repo = clone(sample_org, tmp_path / "c")
    script = tmp_path / "parallel.py"
    script.write_text(
        "import threading\n"
        + "def one():\n"
        + "\n".join("    " + line for line in HOSTILE.replace("CALLS", "1").splitlines())
        + "\nthreads = [threading.Thread(target=one) for _ in range(4)]\n"
        + "[t.start() for t in threads]; [t.join() for t in threads]\n"
    )
    inner_bin = agent_binary(tmp_path)
    wrapper = tmp_path / "parallel-agent"
    wrapper.write_text(
        f'#!/bin/sh\n"{sys.executable}" -I -c "$(cat {script})" || exit 3\n'
        f'exec "{inner_bin}" "$@"\n'
    )
    wrapper.chmod(0o755)
    BudgetedAgent(resolver(model, tmp_path, str(wrapper)), TICKET, 10.0, ledger).run(
        implement(repo)
    )
    assert len(model.conversation("simplifier")) == 8  # the health probe's run, the turn's
    assert ledger.spent(TICKET) == model.billed_usd()
    assert threading.active_count() < 50


def test_an_orgs_daily_cap_is_shared_by_its_tickets(
    model: ScriptedModelServer, sample_org: SampleOrg, tmp_path: Path
) -> None:
    """Two tickets of one org: the first one's turn takes the org past its daily cap (by at
    most one request), so the second one's turn is refused before it reaches the model, with
    the org's note; a ticket of another org goes on."""
    from veranda_dagster.resources.agents import AgentsResource
    from veranda_dagster.storage import ValueStore

    inner = resolver(model, tmp_path)
    BudgetedAgent(inner, "OPS-0", 10.0, StoreLedger(FilesystemValues(tmp_path / "scratch"))).run(
        implement(clone(sample_org, tmp_path / "warm"))
    )  # calibration (and the health probe), in another store
    first_answer = next(b.usd for b in model.billed if b.role == "implementer")
    cap = round(first_answer * 1.5, 6)
    agents = AgentsResource(
        store=ValueStore(base_dir=str(tmp_path / "values")), org_daily_budget_usd={"acme": cap}
    )
    ledger = agents.ledger()

    def budgeted(ticket: str, org: str, notes: list[str]) -> BudgetedAgent:
        caps = agents.org_caps(org)
        return BudgetedAgent(inner, ticket, 10.0, ledger, notes.append, org=org, org_caps=caps)

    billed_before = model.billed_usd()
    budgeted("ENG-1", "acme", []).run(implement(clone(sample_org, tmp_path / "one")))
    acme = ledger.org_spent("acme")
    assert acme == round(model.billed_usd() - billed_before, 6) == ledger.spent("ENG-1") > cap
    assert acme - cap <= max(b.usd for b in model.billed)

    reached = len(model.calls)
    notes: list[str] = []
    with pytest.raises(BudgetExceededError):
        budgeted("ENG-2", "acme", notes).run(implement(clone(sample_org, tmp_path / "two")))
    assert len(model.calls) == reached  # refused before any request
    assert "org acme today has spent" in notes[0] and "daily_budget_usd" in notes[0]
    assert agents.spend_metadata("ENG-2", "acme") == {
        "ticket_spent_usd": 0.0,
        "ticket_cap_usd": agents.ticket_budget_usd,
        "org_spent_today_usd": acme,
        "org_daily_cap_usd": cap,
    }
    budgeted("OPS-1", "other", []).run(implement(clone(sample_org, tmp_path / "three")))
    assert ledger.spent("OPS-1") > 0 and ledger.org_spent("acme") == acme
