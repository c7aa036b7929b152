"""Spend metered with the REAL Claude Code: its streamed requests, its side calls and the calls
its agent makes to the API itself from its Bash tool all reach the ledger through the turn's
proxy, and the ledger equals what the scripted model server billed; under a cap, the request
past it is refused and the turn ends in the budget outcome.

The scripted model plays the ``intruder`` seat (``sim.scripted_agent.intrude``): through Claude
Code's own Bash tool it runs a script that calls the model API directly with the key it finds
in its environment (the turn's placeholder), the way an agent's shell would.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.real_claude import pinned_claude
from veranda_dagster.domain.core.agent import AgentRequest
from veranda_dagster.domain.core.budget import BudgetedAgent, BudgetExceededError
from veranda_dagster.sim.model_server import ScriptedModelServer
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.value_stores import FilesystemValues
from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.health import HealthCache
from veranda_dagster.vendors.resolver import ResolvingAgent, build_agent
from veranda_dagster.vendors.runner import NO_REAL_CLI_ENV

CLAUDE = pinned_claude()
REAL_KEY = "sk-ant-api03-REAL-metering-test-key-5a1f"
TICKET = "ENG-37"

pytestmark = pytest.mark.real_cli

if not CLAUDE.exists() and not os.environ.get("CI"):
    pytest.skip(f"claude binary not installed at {CLAUDE} (CI unset)", allow_module_level=True)

DIRECT = r"""
import json, os, urllib.request
base, key = os.environ["ANTHROPIC_BASE_URL"].rstrip("/"), os.environ["ANTHROPIC_API_KEY"]
for n in range(2):
    body = {"model": "claude-opus-sim", "max_tokens": 1000, "stream": n == 1,
            "messages": [{"role": "user", "content": "Role: simplifier\n" + "x" * 20000}]}
    req = urllib.request.Request(base + "/v1/messages", data=json.dumps(body).encode(),
                                 headers={"x-api-key": key, "content-type": "application/json"})
    print(urllib.request.urlopen(req, timeout=60).status)
"""


@pytest.fixture(autouse=True)
def real_cli_in_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")
    monkeypatch.delenv(NO_REAL_CLI_ENV, raising=False)


def claude_agent(server: ScriptedModelServer, tmp: Path) -> ResolvingAgent:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    doc = {
        "vendors": [
            {
                "vendor": "claude",
                "modes": ["api_key"],
                "binary": str(CLAUDE),
                "base_url": server.base_url,
                "home": str(home),
                "timeout_s": 180,
            }
        ]
    }
    environ = {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": REAL_KEY}
    return build_agent(VendorsConfig.model_validate(doc), environ=environ, health=HealthCache())


def intruder(clone: Path) -> AgentRequest:
    (clone / "direct.py").write_text(DIRECT)
    prompt = f"Role: intruder\nRun this:\n```intruder\n{sys.executable} direct.py\n```\n"
    return AgentRequest(  # high: the model Claude Code picks for it has a rate
        role="intruder", tier="high", prompt=prompt, workdir=str(clone), timeout_s=180
    )


def test_real_claude_code_and_its_agents_own_calls_are_metered_to_the_bill(
    tmp_path: Path,
) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    ledger = StoreLedger(FilesystemValues(tmp_path / "values"))
    with ScriptedModelServer(api_keys=(REAL_KEY,)) as server:
        agent = BudgetedAgent(claude_agent(server, tmp_path), TICKET, 10.0, ledger)
        reply = agent.run(intruder(clone))
        direct = server.conversation("simplifier")
        billed = server.billed_usd()
        streamed = any(c.stream for c in server.calls if c.role == "intruder")
    assert reply.text == "Ran the command."
    assert len(direct) == 2 and all(c.status == 200 for c in direct)  # the agent's own calls
    assert streamed  # Claude Code's own requests are server-sent events
    assert ledger.spent(TICKET) == billed > 0
    assert reply.call.usd == ledger.spent(TICKET)  # not Claude Code's own, smaller, report


def test_real_claude_code_is_stopped_at_the_cap_by_the_proxy(tmp_path: Path) -> None:
    """A cap below one request: the turn's first request crosses it (the health probe's run
    of the CLI is the first, inside the turn), the next is refused with 402, and the turn ends
    in ``BudgetExceededError`` with the ledger equal to the bill."""
    clone = tmp_path / "clone"
    clone.mkdir()
    ledger = StoreLedger(FilesystemValues(tmp_path / "values"))
    notes: list[str] = []
    with ScriptedModelServer(api_keys=(REAL_KEY,)) as server:
        agent = BudgetedAgent(claude_agent(server, tmp_path), TICKET, 1e-6, ledger, notes.append)
        with pytest.raises(BudgetExceededError):
            agent.run(intruder(clone))
        billed = list(server.billed)
    assert billed and ledger.spent(TICKET) == round(sum(b.usd for b in billed), 6)
    assert ledger.spent(TICKET) - 1e-6 <= max(b.usd for b in billed)
    assert len(billed) == 1  # nothing after the crossing request reached the model
    assert len(notes) == 1 and "veranda budget raise ENG-37" in notes[0]


def test_a_model_with_no_rate_falls_back_to_claude_codes_own_cost(tmp_path: Path) -> None:
    """The model Claude Code picks for the standard tier has no row in the rate table: its
    requests are metered at $0, and the turn's cost is Claude Code's own report, recorded as
    one ``cli_cost`` entry, so neither the value nor the ledger says the turn was free."""
    clone = tmp_path / "clone"
    clone.mkdir()
    ledger = StoreLedger(FilesystemValues(tmp_path / "values"))
    simplify = AgentRequest(
        role="simplifier", tier="standard", prompt="Role: simplifier\nx", workdir=str(clone)
    )
    with ScriptedModelServer(api_keys=(REAL_KEY,)) as server:
        agent = BudgetedAgent(claude_agent(server, tmp_path), TICKET, 10.0, ledger)
        agent.run(intruder(clone))  # the health probe runs here, not in the turn below
        before = len(ledger.entries(TICKET))
        reply = agent.run(simplify)
    turn = ledger.entries(TICKET)[before:]
    assert reply.call.usd > 0
    assert [e.usd for e in turn if e.source == "proxy"] == [0.0] * (len(turn) - 1)
    (fallback,) = [e for e in turn if e.source == "cli_cost"]
    assert fallback.usd == reply.call.usd and fallback.model == reply.call.model
