"""Spend accuracy: what the ledger holds against what the model billed, before and after the
proxy meters each request (issue 37).

Each scenario runs the product's real turn path (``BudgetedAgent`` over the resolver, the
Claude vendor and ``SubprocessRunner``; the ``veranda-sim-agent`` stand-in, or a wrapper that
also calls the API itself) against the scripted model server, which counts the usage of every
answer it produces (its own invoice). Two columns, measured in one run:

* ``before``: ``VERANDA_SANDBOX=off``: no proxy, so a turn is recorded from the CLI's own report
  when it returns: exactly how the ledger was written before this change (and still is for a
  turn that reaches no proxy);
* ``after``: the sandbox on: every request goes through the turn's credential proxy, which
  charges each answer's usage and refuses a request once the cap is full.

Scenarios: the issue's failing follow-up (a $0.005 cap, the implementer's follow-up request
fails every time, one run and four re-executions), an agent that calls the API itself (three
direct requests with a 40 kB prompt, then its normal turn), and one turn of twelve requests
under a cap smaller than its first (the overshoot). Run it as::

    PYTHONPATH=. python benchmarks/spend_accuracy.py [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from veranda_dagster.domain.core.agent import AgentRequest
from veranda_dagster.domain.core.budget import BudgetedAgent, BudgetExceededError
from veranda_dagster.sandbox import SANDBOX_ENV
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
RE_EXECUTIONS = 4
FOLLOW_UP_CAP_USD = 0.005
"""Below what the five attempts bill together (about $0.011), above what one bills."""
DIRECT_CALLS = 3
LOOP_CALLS = 12

DIRECT = r"""
import json, os, urllib.request
base, key = os.environ["ANTHROPIC_BASE_URL"].rstrip("/"), os.environ["ANTHROPIC_API_KEY"]
for n in range(CALLS):
    body = {"model": "claude-opus-sim", "max_tokens": 64000,
            "messages": [{"role": "user", "content": "Role: simplifier\n" + "x" * 40000}]}
    req = urllib.request.Request(base + "/v1/messages", data=json.dumps(body).encode(),
                                 headers={"x-api-key": key, "content-type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=60).read()
    except Exception:
        break
"""


def wrapper(work: Path, calls: int) -> str:
    """The stand-in CLI whose agent first calls the API itself ``calls`` times."""
    script = work / f"direct-{calls}.py"
    script.write_text(DIRECT.replace("CALLS", str(calls)))
    inner = agent_binary(work)
    path = work / f"direct-agent-{calls}"
    path.write_text(f'#!/bin/sh\n"{sys.executable}" -I -c "$(cat {script})"\nexec "{inner}" "$@"\n')
    path.chmod(0o755)
    return str(path)


def resolver(model: ScriptedModelServer, work: Path, binary: str) -> ResolvingAgent:
    doc = sim_vendors_config(model.base_url, binary, with_glm=False)
    env = sim_environ({"PATH": os.environ["PATH"], "HOME": str(work)})
    return build_agent(VendorsConfig.model_validate(doc), environ=env, health=HealthCache())


def clone(org: SampleOrg, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(org.bare(BILLING)), str(dest)], check=True)
    return dest


def request(repo: Path) -> AgentRequest:
    return AgentRequest(
        role="implementer", tier="high", prompt="Role: implementer\nFix it.", workdir=str(repo)
    )


def failing_follow_up(
    model: ScriptedModelServer, agent: Callable[[float], BudgetedAgent], repo: Path
) -> dict[str, Any]:
    model.fail_role("implementer", 500, times=1000, step=1)
    budgeted = agent(FOLLOW_UP_CAP_USD)
    outcomes = []
    for _ in range(1 + RE_EXECUTIONS):
        try:
            budgeted.run(request(repo))
            outcomes.append("ok")
        except BudgetExceededError:
            outcomes.append("budget")
        except VendorError as exc:
            outcomes.append(exc.verdict)
    return {"cap_usd": FOLLOW_UP_CAP_USD, "attempts": outcomes}


def direct_calls(
    model: ScriptedModelServer, agent: Callable[[float], BudgetedAgent], repo: Path
) -> dict[str, Any]:
    agent(10.0).run(request(repo))
    return {"cap_usd": 10.0, "direct_requests_answered": len(model.conversation("simplifier"))}


def overshoot(
    model: ScriptedModelServer, agent: Callable[[float], BudgetedAgent], repo: Path
) -> dict[str, Any]:
    cap = 0.01
    try:
        agent(cap).run(request(repo))
        outcome = "ok"
    except BudgetExceededError:
        outcome = "budget"
    except VendorError as exc:
        outcome = exc.verdict
    return {"cap_usd": cap, "attempts": [outcome]}


SCENARIOS: dict[str, tuple[int, Callable[..., dict[str, Any]]]] = {
    "failing_follow_up_x5": (0, failing_follow_up),
    "agent_calls_api_itself": (DIRECT_CALLS, direct_calls),
    "one_turn_over_the_cap": (LOOP_CALLS, overshoot),
}


def measure(name: str, sandbox: str, org: SampleOrg, work: Path) -> dict[str, Any]:
    os.environ[SANDBOX_ENV] = sandbox
    work.mkdir(parents=True)
    direct, scenario = SCENARIOS[name]
    keys, tokens = model_credentials()
    with ScriptedModelServer(api_keys=keys, oauth_tokens=tokens) as model:
        binary = wrapper(work, direct) if direct else agent_binary(work)
        inner = resolver(model, work, binary)
        ledger = StoreLedger(FilesystemValues(work / "values"))

        def agent(cap: float) -> BudgetedAgent:
            return BudgetedAgent(inner, TICKET, cap, ledger)

        facts = scenario(model, agent, clone(org, work / "repo"))
        billed, held = model.billed_usd(), ledger.spent(TICKET)
    return {
        **facts,
        "billed_usd": billed,
        "ledger_usd": held,
        "ledger_share_of_billed": round(held / billed, 4) if billed else None,
        "over_cap_usd": round(max(0.0, billed - facts["cap_usd"]), 6),
    }


def main() -> int:
    logging.getLogger("veranda.proxy").setLevel(logging.ERROR)  # the refusals are the point
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="veranda-spend-bench-") as tmp:
        root = Path(tmp)
        org = create_sample_org(root / "org")
        for name in SCENARIOS:
            results[name] = {
                mode: measure(name, sandbox, org, root / f"{name}-{mode}")
                for mode, sandbox in (("before", "off"), ("after", "bwrap"))
            }
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
        return 0
    print(f"{'scenario':<26} {'mode':<7} {'billed':>9} {'ledger':>9} {'share':>7} {'over cap':>9}")
    for name, modes in results.items():
        for mode, r in modes.items():
            print(
                f"{name:<26} {mode:<7} {r['billed_usd']:>9.4f} {r['ledger_usd']:>9.4f} "
                f"{r['ledger_share_of_billed'] or 0:>7.1%} {r['over_cap_usd']:>9.4f}"
                + (f"  {r['attempts']}" if "attempts" in r else "")
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
