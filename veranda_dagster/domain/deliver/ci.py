"""CI: wait for the PR head's CI jobs, and on red make exactly one grounded repair.

The wait polls at once, then with exponential backoff (``CI_POLL_INITIAL_S`` doubling to
``CI_POLL_MAX_S``), so a finished CI is seen within seconds and a long one at most
``CI_POLL_MAX_S`` late; the forge client makes each poll a conditional request, so unchanged
answers are free. It is bounded by ``timeout_s``, after which the outcome is ``timed_out``; the
clock and sleep are injected so the bound is tested without waiting. On red there is one repair
(``MAX_CI_REPAIRS``), because a retry loop against a broken change burns a full agent budget per
round; a second red is recorded as ``failure``.

The repair prompt is grounded in the gate's own findings when there are any: the findings the
forge reports for the failing jobs and any SARIF/ruff/golangci-lint/ESLint report in their
report text, filtered to the lines this branch added (``diff_hunks`` of ``base...HEAD``), so
another change's violations are never "fixed" here. Only when none of the findings are ours
does the log tail stand in.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from veranda_dagster.domain.clone.diff_hunks import changed_lines
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.core.agent import AgentPort
from veranda_dagster.domain.core.bounds import (
    CI_POLL_INITIAL_S,
    CI_POLL_MAX_S,
    CI_WAIT_TIMEOUT_S,
    MAX_CI_REPAIRS,
    MAX_VIOLATIONS_IN_PROMPT,
    OUTPUT_TAIL_BYTES,
)
from veranda_dagster.domain.core.forge_port import CiJob, Forge
from veranda_dagster.domain.core.models import (
    CheckResult,
    CIOutcome,
    ContextPack,
    ModelCall,
    ReviewRounds,
    Ticket,
    Violation,
)
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.domain.work.prompts import ci_repair_prompt
from veranda_dagster.domain.work.static_analysis import (
    file_span,
    filter_to_commit,
    from_findings,
    parse_report,
    render,
)
from veranda_dagster.domain.work.turn import (
    commit_and_push,
    phase_commits,
    prepare,
    turn,
    worktree_changes,
)

PHASE = "ci_outcome"


def wait_for_checks(
    forge: Forge,
    repo: str,
    sha: str,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    timeout_s: float,
) -> tuple[list[CiJob], int, bool]:
    """``(jobs, polls, all done)``; gives up at ``timeout_s`` of ``clock``."""
    started, delay, polls = clock(), CI_POLL_INITIAL_S, 0
    while True:
        jobs = forge.list_ci_jobs(repo, sha)
        polls += 1
        if jobs and all(j.done for j in jobs):
            return jobs, polls, True
        remaining = started + timeout_s - clock()
        if remaining <= 0:
            return jobs, polls, False
        sleep(min(delay, remaining))
        delay = min(delay * 2, CI_POLL_MAX_S)


def _results(jobs: list[CiJob]) -> list[CheckResult]:
    return [CheckResult(name=j.name, state=j.state) for j in jobs]


def collect_violations(forge: Forge, repo: str, failing: list[CiJob], root: str) -> list[Violation]:
    found: dict[tuple[str, int, str, str], Violation] = {}
    for job in failing:
        violations = from_findings(forge.ci_findings(repo, job))
        violations += parse_report(forge.ci_job_report(repo, job), root=root)
        for v in violations:
            found.setdefault((v.path, v.line, v.rule, v.message), v)
    return list(found.values())


def _log_tail(forge: Forge, repo: str, failing: list[CiJob]) -> str:
    parts = []
    for job in failing:
        log = forge.ci_job_log_tail(repo, job) or forge.ci_job_report(repo, job)
        if log:
            tail = log.encode("utf-8")[-OUTPUT_TAIL_BYTES:].decode("utf-8", errors="ignore")
            parts.append(f"## {job.name} ({job.state})\n{tail}")
    return "\n\n".join(parts)


def ground(
    forge: Forge, pack: ContextPack, workspace: Workspace, failing: list[CiJob]
) -> tuple[str, str, list[Violation]]:
    """``(kind, prompt text, violations that are ours)`` for the repair prompt. The text is a
    CI log's or a report's, written by whatever ran: scrubbed with the high-entropy pass too
    (a key a build printed has no shape the scrubber knows)."""
    everything = collect_violations(forge, pack.repo, failing, str(workspace.path))
    changed = changed_lines(workspace.diff(pack.base_sha))
    ours, theirs = filter_to_commit(
        everything, changed, file_span(lambda path: workspace.file_at("HEAD", path))
    )
    if ours:
        unlisted = len(ours) - MAX_VIOLATIONS_IN_PROMPT
        ours = ours[:MAX_VIOLATIONS_IN_PROMPT]
        text = render(ours)
        if unlisted > 0:
            text += f"\n({unlisted} more finding(s) on this change's lines are not listed.)"
        if theirs:
            text += f"\n({len(theirs)} other finding(s) are outside this change; leave them.)"
        return "violations", scrub(text, high_entropy=True), ours
    tail = scrub(_log_tail(forge, pack.repo, failing), high_entropy=True)
    return ("log_tail", tail, []) if tail else ("none", "", [])


def _repairs_on_branch(workspace: Workspace, review: ReviewRounds) -> int:
    """Repairs already pushed by an earlier attempt of this phase (a retried step must not get
    a second repair): commits after the review's head carrying this phase's trailer."""
    if workspace.head_sha() == review.head_sha:
        return 0
    log = workspace.git("log", "--format=%B", f"{review.head_sha}..HEAD")
    return min(MAX_CI_REPAIRS, phase_commits(log, PHASE))


def await_ci(
    ticket: Ticket,
    pack: ContextPack,
    review: ReviewRounds,
    workspace: Workspace,
    agent: AgentPort,
    forge: Forge,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    timeout_s: float = CI_WAIT_TIMEOUT_S,
) -> CIOutcome:
    repo_dir = prepare(workspace, pack)
    sha = workspace.head_sha()  # the branch on the forge: review's head, or a pushed repair
    calls: list[ModelCall] = []
    repairs, kind = _repairs_on_branch(workspace, review), "none"
    grounded: list[Violation] = []
    total_polls = 0
    while True:
        jobs, polls, done = wait_for_checks(forge, pack.repo, sha, clock, sleep, timeout_s)
        total_polls += polls
        failing = [j for j in jobs if j.failing]
        if not done or not failing or repairs >= MAX_CI_REPAIRS:
            status = "timed_out" if not done else ("failure" if failing else "success")
            return CIOutcome(
                ticket_id=ticket.id,
                calls=calls,
                status=status,  # type: ignore[arg-type]
                head_sha=sha,
                checks=_results(jobs),
                repairs=repairs,
                repair_grounding=kind,  # type: ignore[arg-type]
                violations=grounded,
                polls=total_polls,
            )
        kind, text, grounded = ground(forge, pack, workspace, failing)
        prompt = ci_repair_prompt(ticket, [f"{j.name} ({j.state})" for j in failing], text, kind)
        reply = turn(agent, "ci_repairer", "high", prompt, repo_dir, ticket, tools=pack.mcp_servers)
        calls.append(reply.call)
        repairs += 1
        changed = worktree_changes(workspace)
        if changed:
            sha = commit_and_push(workspace, changed, f"fix({ticket.id}): repair CI", PHASE)
