"""``await_ci``: bounded polling with backoff, exactly one repair, and repair prompts grounded
in the static-analysis findings of this commit's own lines (never another change's)."""

import shutil
from pathlib import Path

import pytest

from tests.domain.conftest import (
    BRANCH,
    TICKET,
    FakeForge,
    ScriptedAgent,
    build_project,
    reply,
    write,
)
from tests.fixtures.work.project import BASE_FILES, SLUGIFY_OK
from tests.support.clock import SleepingClock
from veranda_dagster.domain.core.bounds import (
    CI_POLL_INITIAL_S,
    CI_POLL_MAX_S,
    CI_WAIT_TIMEOUT_S,
    MAX_CI_REPAIRS,
    MAX_VIOLATIONS_IN_PROMPT,
)
from veranda_dagster.domain.core.forge_port import CiFinding, CiJob
from veranda_dagster.domain.core.models import CiState, PullRequest, ReviewRounds
from veranda_dagster.domain.deliver.ci import await_ci, wait_for_checks
from veranda_dagster.domain.work.turn import commit_and_push

FIXTURES = Path(__file__).parents[2] / "fixtures" / "static_analysis"


def _handler(changed: bool) -> str:
    lines = ["package server", "", "func legacy() {", "}", ""]
    lines += [f"// filler {i}" for i in range(6, 20)]
    body = ["\tx := 1", "\t_ = x"] if not changed else ["\tif x := 2; x > 1 {", "\t}"]
    lines += ["func (s *Server) Handle() {", *body, "}"] + [f"// tail {i}" for i in range(24, 31)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def change(tmp_path):
    """A branch commit: text.py line 9 modified and 10-13 added; handler.go 21-22 rewritten."""
    project = build_project(
        tmp_path,
        {
            "internal/server/handler.go": _handler(False),
            "internal/server/other.go": "package server\n",
        },
    )
    ws = project.workspace
    ws.ensure()
    text = BASE_FILES["app/text.py"].replace("s.lower()", "s.lower().strip()") + SLUGIFY_OK
    (ws.path / "app/text.py").write_text(text)
    (ws.path / "internal/server/handler.go").write_text(_handler(True))
    sha = commit_and_push(ws, ["app/text.py", "internal/server/handler.go"], "feat", "patch")
    pr = PullRequest(
        ticket_id=TICKET.id, number=101, url="u", title="t", body="b", branch=BRANCH, head_sha=sha
    )
    review = ReviewRounds(ticket_id=TICKET.id, stopped="clean", head_sha=sha)
    return project, pr, review


def job(state: CiState, id_: str = "1", name: str = "lint") -> CiJob:
    return CiJob(id=id_, name=name, state=state)


def _ci(project, pr, review, agent, forge, timeout_s: float = 600.0):
    clock = SleepingClock()
    out = await_ci(
        TICKET, project.pack, review, project.workspace, agent, forge,
        clock=clock, sleep=clock.sleep, timeout_s=timeout_s,
    )  # fmt: skip
    return out, clock


def _repairer():
    return ScriptedAgent(
        {"ci_repairer": [reply("fixed", write("app/text.py", "\n# repaired\n", append=True))]}
    )


GROUNDING = [
    (
        "ruff_half_outside.json",
        ["`whisper` is too complex (12 > 10)", "Line too long (131 > 100)"],
        ["`os` imported but unused", "Comparison to `None`"],
    ),
    (
        "sarif_half_outside.json",
        ["`slugify` is too complex (16 > 15)", "Function 'Handle' is too long (70 > 60)"],
        ["Magic value", "other.go"],
    ),
    (
        "golangci_half_outside.json",
        ["cyclomatic complexity 21 of func `(*Server).Handle` is high (> 15)", "131 characters"],
        ["`legacy`", "w.Write"],
    ),
]


@pytest.mark.parametrize(("fixture", "ours", "theirs"), GROUNDING)
def test_only_this_commits_violations_reach_the_repair_prompt(change, fixture, ours, theirs):
    project, pr, review = change
    report = (FIXTURES / fixture).read_text()
    first = pr.head_sha
    forge = FakeForge(
        jobs=lambda sha, n: [job("failed" if sha == first else "passed")],
        reports={"1": f"lint failed\n{report}"},
    )
    agent = _repairer()
    outcome, _ = _ci(project, pr, review, agent, forge)
    (request,) = agent.requests
    assert request.role == "ci_repairer" and request.tier == "high"
    for text in ours:
        assert text in request.prompt
    for text in theirs:
        assert text not in request.prompt
    assert "2 other finding(s) are outside this change" in request.prompt
    assert outcome.status == "success" and outcome.repairs == 1
    assert outcome.repair_grounding == "violations" and len(outcome.violations) == 2
    assert {v.path for v in outcome.violations} <= {"app/text.py", "internal/server/handler.go"}
    assert outcome.head_sha == project.remote_sha() != first
    assert all(v.threshold for v in outcome.violations if "complex" in v.message)


FORGE_FINDINGS = [
    CiFinding("app/text.py", 12, 12, "C901", "`slugify` is too complex (18 > 15)", "error", "lint"),
    CiFinding("app/text.py", 4, 4, "C901", "`shout` is too complex (19 > 15)", "error", "lint"),
    CiFinding("README.md", 2, 2, "Spell", "Check your spelling for 'banaas'.", "notice", "lint"),
]
"""What a forge reports itself (not in a report text): one of ours, one on a line this change
did not add, and a notice, which is advice."""


def test_the_forges_own_findings_are_grounding_too_and_thresholds_are_carried(change):
    project, pr, review = change
    forge = FakeForge(
        jobs=lambda sha, n: [job("failed" if sha == pr.head_sha else "passed")],
        findings={"1": FORGE_FINDINGS},
    )
    agent = _repairer()
    outcome, _ = _ci(project, pr, review, agent, forge)
    prompt = agent.requests[0].prompt
    assert "app/text.py:12 lint C901: `slugify` is too complex (18 > 15) [threshold 18 > 15]" in (
        prompt
    )
    assert "`shout`" not in prompt and "banaas" not in prompt
    assert [v.rule for v in outcome.violations] == ["C901"]


def test_a_second_red_is_a_recorded_failure_with_no_second_repair(change):
    project, pr, review = change
    forge = FakeForge(
        jobs=lambda sha, n: [job("failed"), job("passed", "2", "unit")],
        logs={"1": "x" * 50_000 + "\nError: lint gate failed: 3 problems"},
    )
    agent = _repairer()
    outcome, _ = _ci(project, pr, review, agent, forge)
    assert outcome.status == "failure"
    assert outcome.repairs == MAX_CI_REPAIRS == 1
    assert agent.roles() == ["ci_repairer"]
    # no structured findings: the log tail is the (fallback) grounding, bounded
    assert outcome.repair_grounding == "log_tail" and outcome.violations == []
    assert "lint gate failed" in agent.requests[0].prompt
    assert "lint (failed)" in agent.requests[0].prompt
    assert len(agent.requests[0].prompt) < 10_000
    assert [c.name for c in outcome.checks] == ["lint", "unit"]
    assert [(c.name, c.state) for c in outcome.checks] == [("lint", "failed"), ("unit", "passed")]
    assert len(set(forge.job_polls)) == 2  # the original head, then the repaired head


def test_green_ci_needs_no_repair(change):
    project, pr, review = change
    forge = FakeForge(jobs=lambda sha, n: [job("running")] if n < 3 else [job("passed")])
    outcome, clock = _ci(project, pr, review, ScriptedAgent(), forge)
    assert (outcome.status, outcome.repairs, outcome.polls) == ("success", 0, 3)
    assert clock.sleeps == [CI_POLL_INITIAL_S, CI_POLL_INITIAL_S * 2]
    assert outcome.calls == []


def test_the_wait_is_bounded_and_backs_off(change):
    project, pr, review = change
    forge = FakeForge(jobs=lambda sha, n: [job("pending")])
    outcome, clock = _ci(project, pr, review, ScriptedAgent(), forge, timeout_s=600)
    assert outcome.status == "timed_out" and outcome.repairs == 0
    assert sum(clock.sleeps) == 600
    assert clock.sleeps[:4] == [1.0, 2.0, 4.0, 8.0]
    assert max(clock.sleeps) == CI_POLL_MAX_S
    assert outcome.polls == len(clock.sleeps) + 1


def test_the_default_wait_is_ci_wait_timeout_s(change):
    """Without a ``timeout_s`` the phase waits ``CI_WAIT_TIMEOUT_S`` of (scripted) time for
    checks that stay pending, then records ``timed_out``: the default is the named bound."""
    project, _, review = change
    forge = FakeForge(jobs=lambda sha, n: [job("pending")])
    clock = SleepingClock()
    outcome = await_ci(
        TICKET, project.pack, review, project.workspace, ScriptedAgent(), forge,
        clock=clock, sleep=clock.sleep,
    )  # fmt: skip
    assert outcome.status == "timed_out" and sum(clock.sleeps) == CI_WAIT_TIMEOUT_S


def test_a_retried_phase_after_a_pushed_repair_gets_no_second_repair(change):
    project, pr, review = change
    forge = FakeForge(jobs=lambda sha, n: [job("failed")])
    _ci(project, pr, review, _repairer(), forge)  # the first attempt repaired and pushed
    shutil.rmtree(project.repo)  # the step is retried in a new pod
    agent = ScriptedAgent()
    outcome, _ = _ci(project, pr, review, agent, forge)
    assert agent.requests == [] and outcome.repairs == 1 and outcome.status == "failure"
    assert outcome.head_sha == project.remote_sha() != review.head_sha


class TimedCI:
    """A forge whose one CI job finishes ``done_at`` seconds (fake clock) after the wait
    starts: the latency from completion to being seen is what the back-off costs."""

    def __init__(self, clock: SleepingClock, done_at: float) -> None:
        self.clock, self.done_at = clock, done_at

    def list_ci_jobs(self, repo, sha):
        if self.clock() >= self.done_at:
            return [job("passed")]
        return [job("running")]


@pytest.mark.parametrize("done_at", [0.0, 0.8, 7.0, 45.0, 300.0, 1_500.0])
def test_ci_is_seen_within_seconds_of_finishing(done_at):
    clock = SleepingClock()
    runs, _polls, done = wait_for_checks(
        TimedCI(clock, done_at), "acme/app", "abc", clock, clock.sleep, 1_800.0
    )
    assert done and runs[0].state == "passed"
    late = clock.now - done_at
    assert late <= max(CI_POLL_INITIAL_S, done_at)  # never more than the time CI itself took
    assert late <= CI_POLL_MAX_S
    if done_at <= 1.0:
        assert clock.now <= 1.0  # a finished (or sub-second) CI costs at most one short sleep
    assert not clock.sleeps or clock.sleeps[0] == CI_POLL_INITIAL_S <= 1.0


@pytest.mark.parametrize(
    ("state", "status", "turns"),
    [("cancelled", "failure", 1), ("neutral", "success", 0), ("skipped", "success", 0)],
)
def test_a_cancelled_job_is_red_and_neutral_or_skipped_ones_are_not(change, state, status, turns):
    project, pr, review = change
    forge = FakeForge(jobs=lambda sha, n: [job(state), job("passed", "2", "unit")])
    agent = ScriptedAgent(default={"ci_repairer": reply("nothing I can change")})
    outcome, _ = _ci(project, pr, review, agent, forge)
    assert outcome.status == status and len(agent.requests) == turns == outcome.repairs


DEPLOY_KEY = "a3f9c2e8d1b7465f90e2c3a4b5d6e7f8091a2b3c"


def test_a_ci_log_with_a_deploy_password_and_a_hex_key_reaches_the_model_masked(change):
    """Neither has a shape the scrubber knew: the password is said in prose, the key is 40
    random hex characters. The repair prompt gets the log's failure, not the two secrets."""
    project, pr, review = change
    log = (
        "Deploying to staging with deploy password: Hunt3r-2!x\n"
        f"using key {DEPLOY_KEY}\nError: lint gate failed: 3 problems"
    )
    forge = FakeForge(jobs=lambda sha, n: [job("failed")], logs={"1": log})
    agent = _repairer()
    _ci(project, pr, review, agent, forge)
    prompt = agent.requests[0].prompt
    assert "lint gate failed" in prompt and "deploy password: ***" in prompt
    assert "Hunt3r-2!x" not in prompt and DEPLOY_KEY not in prompt


@pytest.mark.parametrize("count", [MAX_VIOLATIONS_IN_PROMPT, MAX_VIOLATIONS_IN_PROMPT + 1])
def test_the_repair_prompt_lists_at_most_its_bound_of_violations_and_says_so(change, count):
    """``MAX_VIOLATIONS_IN_PROMPT``: one finding on this change's lines more than the bound
    lists the first ``MAX_VIOLATIONS_IN_PROMPT`` and says one more is not listed; its twin,
    exactly the bound, lists all with no such line."""
    project, pr, review = change
    findings = [
        CiFinding("app/text.py", 12, 12, f"R{i:03d}", f"rule {i:03d} broken", "error", "lint")
        for i in range(count)
    ]
    forge = FakeForge(
        jobs=lambda sha, n: [job("failed" if sha == pr.head_sha else "passed")],
        findings={"1": findings},
    )
    agent = _repairer()
    outcome, _ = _ci(project, pr, review, agent, forge)
    prompt = agent.requests[0].prompt
    assert len(outcome.violations) == MAX_VIOLATIONS_IN_PROMPT
    last = MAX_VIOLATIONS_IN_PROMPT - 1
    assert f"rule {last:03d} broken" in prompt
    assert f"rule {last + 1:03d} broken" not in prompt
    unlisted = "1 more finding(s) on this change's lines are not listed"
    assert (unlisted in prompt) is (count > MAX_VIOLATIONS_IN_PROMPT)
