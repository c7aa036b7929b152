"""The patch phase: the implementer turns the red tests green, and the repo's own checks pass.

Each attempt is one implementer turn (tier ``high``) followed by the red tests and the
repository's build/lint/test commands; whatever failed (output tails) goes into the next
prompt, up to ``MAX_PATCH_ATTEMPTS``. An implementer that edits the red tests gets them
restored: the definition of done predates the patch and is not its to weaken.

Once green, the separate test-writer seat (``test_writer``) adds tests from the ticket and the
diff alone. A failing one is a real defect and goes back to the implementer within the same
bound. Coverage is measured before and after when the repository has a coverage command.
"""

from __future__ import annotations

import re

from veranda_dagster.domain.clone.workspace import GitError, Workspace
from veranda_dagster.domain.core.agent import AgentPort
from veranda_dagster.domain.core.bounds import MAX_PATCH_ATTEMPTS, VALIDATION_TIMEOUT_S
from veranda_dagster.domain.core.errors import InputError, VerandaError
from veranda_dagster.domain.core.models import (
    CommandResult,
    ContextPack,
    ModelCall,
    Patch,
    RedTests,
    RepoFacts,
    Ticket,
)
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.domain.work.prompts import implementer_prompt
from veranda_dagster.domain.work.red_tests import run_red_tests
from veranda_dagster.domain.work.test_writer import ExtraTests, write_extra_tests
from veranda_dagster.domain.work.turn import commit_and_push, prepare, turn, worktree_changes
from veranda_dagster.domain.work.validation import (
    failure_report,
    run_command,
    run_validation,
)

PHASE = "patch"
MAX_SUMMARY_CHARS = 4_000
"""Characters of the implementer's closing summary kept for the PR body: a reviewer reads a
page; a summary that pastes its whole transcript is cut, leaving the body room for the what-ran
table and the citations under a forge's body limit (tens of thousands of characters)."""

_COVERAGE_TOTALS = (
    # coverage.py / pytest-cov; one ``\s`` and a number that starts where its digits do, so a
    # long TOTAL line is scanned once (``\s+.*?`` rescanned it per split: quadratic)
    re.compile(r"^TOTAL\s.*?(?<!\d)(\d+(?:\.\d+)?)%\s*$", re.MULTILINE),
    re.compile(r"coverage: (\d+(?:\.\d+)?)% of statements"),  # go test -cover
    re.compile(r"^All files\s*\|\s*(\d+(?:\.\d+)?)", re.MULTILINE),  # istanbul/jest/vitest
    re.compile(r"^(\d+(?:\.\d+)?)% coverage", re.MULTILINE),  # cargo tarpaulin
)


class PatchFailed(VerandaError):
    """The implementer did not get everything green within the bound."""

    def __init__(self, ticket_id: str, attempts: int, problems: str) -> None:
        self.attempts = attempts
        self.problems = problems
        super().__init__(
            f"{ticket_id}: still failing after {attempts} implementer attempts:\n{problems[-1500:]}"
        )


def parse_coverage_total(output: str) -> float | None:
    """The total coverage percentage a coverage tool printed (the last total wins)."""
    for pattern in _COVERAGE_TOTALS:
        found = pattern.findall(output)
        if found:
            return float(found[-1])
    return None


def measure_coverage(
    facts: RepoFacts, repo: str, timeout_s: float = VALIDATION_TIMEOUT_S
) -> float | None:
    if not facts.coverage:
        return None
    return parse_coverage_total(run_command(facts.coverage[0], repo, timeout_s).output_tail)


def _restore_red_tests(workspace: Workspace, red: RedTests) -> list[str]:
    edited = workspace.git("diff", "--name-only", red.commit_sha, "--", *red.test_files)
    paths = [p for p in edited.splitlines() if p]
    if paths:
        workspace.git("checkout", red.commit_sha, "--", *paths)
    return paths


def _worktree_diff(workspace: Workspace, base: str) -> str:
    new = worktree_changes(workspace)
    if new:
        workspace.git("add", "--intent-to-add", "--", *new)
    return workspace.git("diff", "--unified=3", base)


def implement(
    ticket: Ticket,
    pack: ContextPack,
    red: RedTests,
    workspace: Workspace,
    agent: AgentPort,
    *,
    validation_timeout_s: float = VALIDATION_TIMEOUT_S,
) -> Patch:
    """``validation_timeout_s`` bounds every command the phase runs (coverage, red tests, the
    repo's build/lint/test, the independent tests); a hung one is killed and reported."""
    repo = prepare(workspace, pack)
    try:
        workspace.git("merge-base", "--is-ancestor", red.commit_sha, "HEAD")
    except GitError:
        raise InputError(
            f"{ticket.id}: the branch {workspace.branch} does not contain the red tests "
            f"commit {red.commit_sha[:12]}; re-run red_tests"
        ) from None
    before = measure_coverage(pack.facts, str(repo), validation_timeout_s)
    calls: list[ModelCall] = []
    extra: ExtraTests | None = None
    problems, summary = "", ""
    results: list[CommandResult] = []
    for attempt in range(1, MAX_PATCH_ATTEMPTS + 1):
        prompt = implementer_prompt(
            ticket, pack, red.test_files, red.base_run.output_tail, problems
        )
        reply = turn(agent, "implementer", "high", prompt, repo, ticket, tools=pack.mcp_servers)
        calls.append(reply.call)
        summary = reply.text
        restored = _restore_red_tests(workspace, red)
        note = (
            f"You edited the red tests {', '.join(restored)}; they were restored. Change the "
            "code, not the tests.\n"
            if restored
            else ""
        )
        results = _check(pack, red, extra, str(repo), validation_timeout_s)
        if all(r.ok for r in results) and extra is None:
            extra = write_extra_tests(
                ticket,
                pack,
                workspace,
                agent,
                _worktree_diff(workspace, red.commit_sha),
                validation_timeout_s=validation_timeout_s,
            )
            calls.append(extra.call)
            if extra.run is not None:
                results = [*results, extra.run]  # its run is the check of the new tests
        if all(r.ok for r in results):
            paths = worktree_changes(workspace)
            subject = f"feat({ticket.id}): {ticket.title}"[:72]
            sha = commit_and_push(workspace, paths, subject, PHASE)
            return Patch(
                ticket_id=ticket.id,
                calls=calls,
                branch=workspace.branch,
                commit_sha=sha,
                files_changed=workspace.changed_files(red.commit_sha),
                attempts=attempt,
                validation=results,
                extra_test_files=extra.files if extra else [],
                coverage_before=before,
                coverage_after=measure_coverage(pack.facts, str(repo), validation_timeout_s),
                summary=scrub(summary)[:MAX_SUMMARY_CHARS],
                earlier_calls=[*pack.guess_calls, *red.calls],
            )
        problems = note + _problems(results, extra)
    raise PatchFailed(ticket.id, MAX_PATCH_ATTEMPTS, problems)


def _check(
    pack: ContextPack, red: RedTests, extra: ExtraTests | None, repo: str, timeout_s: float
) -> list[CommandResult]:
    """Red tests, then the repository's own commands, then the independent seat's tests."""
    results = [run_red_tests(pack, red.test_files, repo, timeout_s)]
    results += run_validation(pack.facts, repo, timeout_s)
    if extra and extra.files:
        results.append(run_red_tests(pack, extra.files, repo, timeout_s))
    return results


def _problems(results: list[CommandResult], extra: ExtraTests | None) -> str:
    report = failure_report(results)
    if extra and extra.files and not results[-1].ok:
        report = (
            "An independent tester's new tests fail against your change "
            f"({', '.join(extra.files)}). Treat this as a defect in the change, not in the "
            f"tests; do not edit or delete them.\n\n{report}"
        )
    return report
