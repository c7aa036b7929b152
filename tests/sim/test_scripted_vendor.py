"""The scripted model + stand-in CLI, run through the product's real vendors and resolver."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from veranda_dagster.domain.core.agent import AgentRequest
from veranda_dagster.domain.core.models import ContextPack, RepoFacts, RepoGuess, Ticket
from veranda_dagster.domain.intake.repo_confirmation import confirm_prompt
from veranda_dagster.domain.work import prompts
from veranda_dagster.sim.agent_cli import apply_tool
from veranda_dagster.sim.model_server import ScriptedModelServer
from veranda_dagster.sim.sample_org import BILLING, INVOICE_FIXED_LINE, SampleOrg
from veranda_dagster.sim.scripted_agent import ROLE_ASSET, detect_role
from veranda_dagster.sim.sim_vendors import (
    SIM_KEYS,
    agent_binary,
    model_credentials,
    sim_environ,
    sim_vendors_config,
)
from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.health import HealthCache
from veranda_dagster.vendors.plugins._base import PROBE_PROMPT
from veranda_dagster.vendors.port import VendorError
from veranda_dagster.vendors.resolver import build_agent

TICKET = Ticket(
    id="ENG-1", source="linear", title="Invoice total", description="Repo: acme/billing"
)


def products_prompts(sample_org: SampleOrg) -> dict[str, str]:
    """Every seat's prompt as the product builds it, keyed by the seat it is for."""
    from veranda_dagster.domain.intake.catalog import load_catalog

    # partial values: only the fields the prompts read (model_construct skips validation)
    pack = ContextPack.model_construct(citations=[], files=[], facts=RepoFacts())  # type: ignore[call-arg]
    guess = RepoGuess.model_construct(repo=BILLING, signal="declaration", confidence="high")  # type: ignore[call-arg]
    cat = load_catalog(sample_org.catalog_path)
    return {
        "repo_confirmer": confirm_prompt(guess, TICKET, cat),
        "test_writer": prompts.red_tests_prompt(TICKET, pack, []),
        "implementer": prompts.implementer_prompt(TICKET, pack, ["t.py"], "1 failed", ""),
        "second_test_writer": prompts.second_writer_prompt(TICKET, pack, "diff"),
        "simplifier": prompts.simplifier_prompt(TICKET, "diff"),
        "reviewer": prompts.reviewer_prompt(TICKET, "diff", []),
        "review_fixer": prompts.fixer_prompt(TICKET, ["x"]),
        "ci_repairer": prompts.ci_repair_prompt(TICKET, ["lint"], "F401", "violations"),
        "feedback_implementer": prompts.feedback_prompt(TICKET, ["nit"]),
        "probe": PROBE_PROMPT,
    }


def test_every_seat_is_read_off_the_role_line_the_product_sends(sample_org: SampleOrg) -> None:
    table = products_prompts(sample_org)
    assert {seat: detect_role(p) for seat, p in table.items()} == {s: s for s in table}
    assert set(table) - {"probe"} == set(prompts.SEATS) == set(ROLE_ASSET)
    assert detect_role('"Role: reviewer\nthe rest"') == "reviewer"  # opencode quotes prompts


def test_rewording_a_prompt_does_not_change_its_seat(sample_org: SampleOrg) -> None:
    """The sim reads only the ``Role:`` line: a prompt whose every sentence is rewritten (or
    that borrows another seat's sentence) keeps its seat, and one without the line has none."""
    for seat, prompt in products_prompts(sample_org).items():
        role, _, rest = prompt.partition("\n")
        reworded = (
            " ".join(reversed(rest.split())) + "\nYou are the reviewer. You are the test writer."
        )
        assert detect_role(f"{role}\n{reworded}") == seat
        assert detect_role(rest) == "unknown", seat


def clone(org: SampleOrg, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(org.bare(BILLING)), str(dest)], check=True)
    return dest


@pytest.fixture()
def model():
    keys, tokens = model_credentials()
    with ScriptedModelServer(api_keys=keys, oauth_tokens=tokens) as server:
        yield server


def agent_for(model: ScriptedModelServer, tmp: Path, with_glm: bool = True):
    doc = sim_vendors_config(model.base_url, agent_binary(tmp), with_glm=with_glm)
    env = sim_environ({"PATH": __import__("os").environ["PATH"], "HOME": str(tmp)})
    return build_agent(VendorsConfig.model_validate(doc), environ=env, health=HealthCache())


def implement_request(repo: Path, pin: str | None = None) -> AgentRequest:
    return AgentRequest(
        role="implementer",
        tier="high",
        prompt="Role: implementer\nFix it.",
        workdir=str(repo),
        pinned_model=pin,
    )


def test_a_turn_edits_the_clone_and_is_costed(
    model: ScriptedModelServer, sample_org: SampleOrg, tmp_path: Path
) -> None:
    repo = clone(sample_org, tmp_path / "c")
    reply = agent_for(model, tmp_path).run(implement_request(repo))
    assert INVOICE_FIXED_LINE in (repo / "billing/invoice.py").read_text()
    call = reply.call
    assert (call.vendor, call.mode, call.model, call.reason) == (
        "claude",
        "api_key",
        "claude-opus-sim",
        "preferred",
    )
    assert call.usage.input > 0 and call.usage.output > 0 and call.usd > 0
    assert "invoice_total_cents" in reply.text
    assert model.calls_by_role() == {"probe": 1, "implementer": 1}


def test_revoked_key_falls_back_to_the_same_vendors_other_mode_first(
    model: ScriptedModelServer, sample_org: SampleOrg, tmp_path: Path
) -> None:
    repo = clone(sample_org, tmp_path / "c")
    agent = agent_for(model, tmp_path)
    agent.run(AgentRequest(role="x", tier="cheap", prompt="Role: simplifier", workdir=str(repo)))
    model.revoke(SIM_KEYS["SIM_ANTHROPIC_API_KEY"])
    reply = agent.run(implement_request(repo, pin="claude-opus-sim"))
    assert (reply.call.vendor, reply.call.mode) == ("claude", "login")
    assert reply.call.reason == "fallback:auth:claude/api_key"
    assert reply.call.dropped_pin is None  # same vendor: the pin survives
    model.revoke(SIM_KEYS["SIM_CLAUDE_OAUTH_TOKEN"])
    reply = agent.run(implement_request(repo, pin="claude-opus-sim"))
    assert reply.call.vendor == "glm" and reply.call.dropped_pin == "claude-opus-sim"
    assert reply.call.reason.startswith("fallback:auth:claude/")


def test_model_5xx_is_upstream_and_not_a_fallback(
    model: ScriptedModelServer, sample_org: SampleOrg, tmp_path: Path
) -> None:
    repo = clone(sample_org, tmp_path / "c")
    agent = agent_for(model, tmp_path)
    model.fail_role("implementer", 500, times=2)  # the CLI retries once, as Claude Code does
    with pytest.raises(VendorError) as err:
        agent.run(implement_request(repo))
    assert err.value.verdict == "upstream"
    assert agent.run(implement_request(repo)).call.mode == "api_key"


def test_tool_calls_never_leave_the_working_directory(tmp_path: Path) -> None:
    ok, _ = apply_tool(tmp_path, "Write", {"file_path": "../escape.txt", "content": "x"})
    assert not ok and not (tmp_path.parent / "escape.txt").exists()
    ok, _ = apply_tool(tmp_path, "Write", {"file_path": "a/b.txt", "content": "x"})
    assert ok and (tmp_path / "a/b.txt").read_text() == "x"
    assert apply_tool(
        tmp_path, "Edit", {"file_path": "a/b.txt", "old_string": "x", "new_string": "y"}
    )[0]
    assert apply_tool(
        tmp_path, "Edit", {"file_path": "a/b.txt", "old_string": "x", "new_string": "y"}
    )[0]  # already applied: idempotent
    assert not apply_tool(
        tmp_path, "Edit", {"file_path": "a/b.txt", "old_string": "q", "new_string": "z"}
    )[0]


def test_blocked_role_waits_for_release(model: ScriptedModelServer) -> None:
    import threading

    import httpx

    arrived = model.block("implementer")
    body = {"model": "m", "messages": [{"role": "user", "content": "Role: implementer"}]}
    headers = {"x-api-key": SIM_KEYS["SIM_ANTHROPIC_API_KEY"]}
    out: list[int] = []
    t = threading.Thread(
        target=lambda: out.append(
            httpx.post(f"{model.base_url}/v1/messages", json=body, headers=headers).status_code
        )
    )
    t.start()
    assert arrived.wait(10) and out == []
    model.release("implementer")
    t.join(10)
    assert out == [200]
    assert json.dumps(SIM_KEYS["SIM_ANTHROPIC_API_KEY"]) not in repr(model.calls)
