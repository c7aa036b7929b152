"""The whole ``ticket_run`` done by each REAL vendor CLI, offline.

Each vendor's pinned CLI (``.ci/run`` installs them; ``sim.sim_vendors.REAL_AGENTS``) runs every
seat of the sample ticket against the scripted model server on 127.0.0.1, in its own wire
format and tool vocabulary, inside a network namespace with only loopback where the machine
allows it. It must get what ``test_demo`` asserts of the stand-in (the per-asset model calls,
one PR, CI green), leave the red test and the fix on the branch, and the request log must
show the tool loop: streamed replies, and follow-ups carrying the tools' results back,
including the repository's own tests run by the agent's own shell (red for the test writer,
green for the implementer: the agent sees the results the pipeline acts on). Without a
binary the test skips, except under ``CI``, where a missing CLI fails.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e import offline
from tests.e2e.conftest import linear_ticket_run, step_failures
from veranda_dagster.sim.sample_org import (
    BILLING,
    INVOICE_FIXED_LINE,
    SAMPLE_TICKET_BODY,
    SAMPLE_TICKET_TITLE,
)
from veranda_dagster.sim.scripted_agent import RED_TEST
from veranda_dagster.sim.sim_vendors import REAL_AGENTS
from veranda_dagster.sim.summary import ASSETS, run_summary
from veranda_dagster.sim.world import SimWorld

MAIN_AGENTS = ("claude", "codex")
"""The vendors whose whole ticket runs in the main suite (each also has single-turn real-CLI
tests in ``tests/vendors/test_real_cli.py``). The others go to the ``real_cli_slow`` step, which
``.ci/run`` runs too: opencode (GLM) starts a Bun runtime per turn (~4 s), and Kimi Code's,
Gemini CLI's and Grok's whole tickets took 1-2 minutes each on two cores."""
AGENT_PARAMS = [
    pytest.param(a, marks=[] if a in MAIN_AGENTS else [pytest.mark.real_cli_slow], id=a)
    for a in REAL_AGENTS
]
pytestmark = [pytest.mark.slow, pytest.mark.real_cli]

FLAT_FEE = ("glm",)
"""GLM through opencode runs the Coding Plan's models (``zai-coding-plan/*``): a subscription,
priced 0 per token in the rate table, so only its tokens are asserted."""
SEAT_CALLS = {
    "repo_confirmer": 1,
    "test_writer": 1,
    "implementer": 1,
    "second_test_writer": 1,
    "simplifier": 1,
    "reviewer": 2,
    "review_fixer": 1,
}
TESTS_RAN = re.compile(r"(?<!\d)\d+ (failed|passed)\b")
"""pytest's summary, also inside a JSON-escaped result (Gemini's `\\n1 failed`)."""


def branch_file(world: SimWorld, branch: str, path: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={world.org.bare(BILLING)}", "show", f"{branch}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.parametrize("agent", AGENT_PARAMS)
def test_a_real_cli_does_the_whole_ticket_offline(
    agent: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    offline.require_cli(agent)
    if offline.ran_offline(request):
        return
    if offline.in_netns():
        offline.assert_offline()
    started = time.monotonic()
    with SimWorld(root=tmp_path / "world", agent=agent) as world:
        ticket = (SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)
        with linear_ticket_run(world, *ticket) as (key, instance, run_id, ok):
            assert ok, step_failures(instance, run_id)
            summary = run_summary(instance, key, world.linear.bot_comments(key))
        elapsed = time.monotonic() - started

        # what test_demo asserts of the stand-in
        assert list(summary.assets) == list(ASSETS)
        assert {a.status for a in summary.assets.values()} == {"materialized"}
        calls = {k: a.model_calls for k, a in summary.assets.items() if a.model_calls}
        assert calls == {"repo_guess": 1, "red_tests": 1, "patch": 2, "review_rounds": 4}
        assert all(summary.assets[k].tokens_in > 0 for k in calls)
        if agent not in FLAT_FEE:
            assert all(summary.assets[k].usd > 0 for k in calls)
        vendor = REAL_AGENTS[agent].vendor
        assert {summary.assets[k].vendor.split("/")[0] for k in calls} == {vendor}
        assert summary.ci == "success"
        pulls = world.github.all_pulls()
        assert len(pulls) == 1 and summary.pr_url.endswith(f"/{BILLING}/pull/1")

        # the branch holds the red test and the fix, written by the real CLI's own tools
        branch = pulls[0]["head"]["ref"]
        assert branch_file(world, branch, "tests/test_quantity.py") == RED_TEST
        assert INVOICE_FIXED_LINE in branch_file(world, branch, "billing/invoice.py")

        # the request log: a streamed tool loop, each tool's result carried back
        model = world.model
        turns = model.calls_by_role(ok_only=True)
        assert {seat: n for seat, n in turns.items() if seat != "probe"} == SEAT_CALLS
        assert all(c.stream and c.status == 200 for c in model.calls), model.calls
        for seat in ("test_writer", "implementer", "second_test_writer", "review_fixer"):
            turn = model.conversation(seat)
            assert [c.step for c in turn] == [0, 1, 2], (seat, turn)
            assert all(c.tool_results for c in turn[1:]), (seat, turn)
            assert turn[0].tool_call and turn[1].tool_call and turn[2].tool_call is None
        for seat, outcome in (("test_writer", "failed"), ("implementer", "passed")):
            result = model.conversation(seat)[-1].tool_results[-1]
            said = {m.group(1) for m in TESTS_RAN.finditer(result)}
            assert said and ("failed" in said) == (outcome == "failed"), (seat, result)
    print(f"real {agent}: whole ticket in {elapsed:.1f} s, {len(model.calls)} model requests")
