"""A whole ticket from Jira to GitLab, Jira to GitHub and Linear to GitLab, on the real graph.

Each run files the sample ticket in the chosen source, lets that source's real sensor pick it
up, and runs every asset in a fresh worker against the chosen forge's fake, with the forge's
CI also running a Code Quality job (``fake_ci.CODE_QUALITY_JOB``). The sample fix's tests have
no docstrings, and neither do the two tests already on ``main``, so the first pipeline's report
holds five findings of which two lie outside the commit: the job fails on the three new ones,
``ci_outcome`` spends its one repair on exactly those (read from GitLab's Code Quality artifact
or GitHub's check-run annotations) and the second pipeline is green. One MR/PR, on the chosen
forge only; the ticket comment goes back to the chosen source.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.conftest import step_failures
from veranda_dagster.sim.driver import SensorDriver, run_tags, run_ticket_process
from veranda_dagster.sim.fake_ci import CODE_QUALITY_JOB, CODE_QUALITY_RULE
from veranda_dagster.sim.sample_org import BILLING, SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.summary import run_summary
from veranda_dagster.sim.world import SimWorld

pytestmark = pytest.mark.slow

OURS = {"tests/test_quantity.py", "tests/test_quantity_edges.py"}
THEIRS = {"tests/test_invoice.py"}
EXTRA = pytest.mark.real_cli_slow
"""The two extra pairs run in ``.ci/run``'s step for long whole-ticket runs (about a minute
each on two cores), so the main suite keeps one: Jira to GitLab."""
PAIRS = [
    pytest.param({"tickets": "jira", "forge": "gitlab", "code_quality": True}, id="jira-gitlab"),
    pytest.param(
        {"tickets": "jira", "forge": "github", "code_quality": True}, id="jira-github", marks=EXTRA
    ),
    pytest.param(
        {"tickets": "linear", "forge": "gitlab", "code_quality": True},
        id="linear-gitlab",
        marks=EXTRA,
    ),
]


def git(world: SimWorld, *args: str) -> str:
    bare = world.org.bare(BILLING)
    proc = subprocess.run(
        ["git", f"--git-dir={bare}", *args], capture_output=True, text=True, check=True
    )
    return proc.stdout


@pytest.mark.parametrize("world", PAIRS, indirect=True)
def test_one_ticket_one_request_one_grounded_repair(world: SimWorld, instance) -> None:
    key = world.file_ticket(SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)
    (request,) = SensorDriver().tick(instance, world.sensor)
    assert request.partition_key == key
    assert key.startswith("jira-PAY-") if world.tickets == "jira" else key == "ENG-101"

    run_id, ok = run_ticket_process(run_tags(request), world.env)
    assert ok, step_failures(instance, run_id)
    world.forge_ci.wait_idle(timeout=30)
    summary = run_summary(instance, key, world.bot_comments(key))

    # one merge/pull request, on the chosen forge only
    (pr,) = world.pull_requests()
    other = world.github if world.forge == "gitlab" else world.gitlab
    assert pr["url"] == summary.pr_url and pr["repo"] == BILLING
    assert ("/-/merge_requests/1" if world.forge == "gitlab" else "/pull/1") in pr["url"]
    assert not (other.pulls if other is world.github else world.gitlab.mrs)
    assert key in pr["title"] or key.lower() in pr["branch"]

    # CI outcome read: red on the new findings, one grounded repair, then green
    ci = summary.assets["ci_outcome"].meta
    assert (ci["ci_status"], ci["repairs"], ci["repair_grounding"]) == ("success", 1, "violations")
    assert ci["violations"] == 3  # ours only; the two on main stayed out of the prompt
    branch = pr["branch"]
    repaired, before = git(world, "rev-parse", branch, f"{branch}~1").split()
    quality = {r.head_sha: r for r in world.forge_ci.runs.values() if r.name == CODE_QUALITY_JOB}
    first, second = quality[before], quality[repaired]
    assert first.conclusion == "failure" and second.conclusion == "success"
    reported = [a["path"] for a in first.annotations]
    assert {a["title"] for a in first.annotations} == {CODE_QUALITY_RULE}
    assert sorted(reported) == sorted([*THEIRS, *THEIRS, *OURS, "tests/test_quantity_edges.py"])

    # the repair commit touched this change's files and nothing else
    log = git(world, "log", "--format=%s", f"main..{branch}").splitlines()
    assert log[0] == f"fix({key}): repair CI" and sum("repair CI" in s for s in log) == 1
    touched = set(git(world, "diff", "--name-only", f"{branch}~1", branch).split())
    assert touched == OURS
    assert git(world, "diff", "main", branch, "--", *THEIRS) == ""

    if world.forge == "gitlab":  # the findings came from GitLab's Code Quality artifact
        artifact = world.gitlab.requests_to("/api/v4/projects/*/jobs/*/artifacts/*")
        assert any(r.path.endswith("gl-code-quality-report.json") for r in artifact)

    # the ticket comment went back to the ticket's own source
    assert summary.comments and any(summary.pr_url in c for c in summary.comments)
    if world.tickets == "jira":
        assert not world.linear.bot_comments("ENG-101")
