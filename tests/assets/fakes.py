"""A counting, scripted ``DomainCalls`` for the asset tests: the asset graph without the domain.

It is bound under the ``domain`` key in place of the real one (the other resources stay the
offline ones of ``tests.support.resources.nested``), answers each phase by name from the
phase's upstream values, and refuses a phase it has no answer for (``UnscriptedPhaseError``),
so a new phase never silently runs its real code here.

Calls are appended to ``<counter_dir>/calls.log`` (one phase name per line, ``O_APPEND``), so
counts survive step subprocesses and fresh processes. ``fail_once`` names phases that raise a
non-retryable ``ConfigError`` on their first call only (a marker file remembers), the way an
operator would fix a setting and re-execute from failure.
"""

from __future__ import annotations

import inspect
import os
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

import dagster as dg

from tests.support.resources import nested
from veranda_dagster.assets.feedback import previous_feedback
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import (
    CIOutcome,
    Citation,
    CommandResult,
    ContextPack,
    Feedback,
    FeedbackRound,
    ModelCall,
    PackFile,
    Patch,
    PullRequest,
    RedTests,
    RepoGuess,
    ReviewRound,
    ReviewRounds,
    Ticket,
    Usage,
    Window,
    WorkOrder,
)
from veranda_dagster.domain.core.work_order import packed
from veranda_dagster.resources.domain_calls import DOMAIN_CALLS_KEY, DomainCalls
from veranda_dagster.storage import ValueStore, VerandaIOManager

V = TypeVar("V")

SHA = "a" * 40
HEAD = "b" * 40


def call(role: str, tier: str = "high", usd: float = 0.25) -> ModelCall:
    return ModelCall(
        role=role,
        vendor="claude",
        mode="api_key",
        tier=tier,  # type: ignore[arg-type]
        model="claude-test-1",
        reason="preferred",
        usage=Usage(input=1000, output=200),
        usd=usd,
    )


def _append(path: Path, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def read_pids(counter_dir: str | Path) -> dict[str, tuple[int, int]]:
    """``phase -> (pid, parent pid)`` of the process each phase's call ran in (last call)."""
    log = Path(counter_dir) / "pids.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return {p: (int(pid), int(ppid)) for p, pid, ppid in (line.split() for line in lines)}


def read_calls(counter_dir: str | Path) -> Counter[str]:
    log = Path(counter_dir) / "calls.log"
    if not log.exists():
        return Counter()
    return Counter(line for line in log.read_text().splitlines() if line)


class UnscriptedPhaseError(AssertionError):
    """A phase the scripted domain has no answer for: script it, never run the real one."""


class ScriptedDomain(DomainCalls):
    """Each phase's answer is the method named after the phase; a subclass overrides one to
    script a failure or another value."""

    counter_dir: str
    values_dir: str
    """The value store's directory: ``feedback`` continues from the stored previous value."""
    fail_once: str = ""
    """Comma-separated phases that fail on their first call."""
    ask: bool = False
    """Make ``repo_guess`` ask instead of proceeding."""
    marker: str = ""
    """Appended to the ticket title, so a value's origin (which process made it) is visible."""

    def call(self, phase: str, domain_call: Callable[[], V], inputs: Mapping[str, object]) -> V:
        answer = getattr(self, f"phase_{phase}", None)
        if answer is None:
            raise UnscriptedPhaseError(f"the scripted domain has no answer for phase {phase!r}")
        self._record(phase)
        params = inspect.signature(answer).parameters.values()
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            named = {p.name for p in params}
            inputs = {k: v for k, v in inputs.items() if k in named}
        return cast(V, answer(**inputs))

    def _record(self, phase: str) -> None:
        _append(Path(self.counter_dir) / "calls.log", f"{phase}\n")
        _append(Path(self.counter_dir) / "pids.log", f"{phase} {os.getpid()} {os.getppid()}\n")
        if phase in self.fail_once.split(","):
            marker = Path(self.counter_dir) / f"failed-{phase}"
            if not marker.exists():
                marker.write_text("1")
                raise ConfigError(f"simulated: {phase} misconfigured (first call only)")

    def phase_ticket(self, partition_key: str) -> Ticket:
        key = partition_key
        title = f"Fix retries {self.marker}".strip()
        return Ticket(id=key, source="linear", title=title, description="repo: acme/api")

    def phase_repo_guess(self, ticket: Ticket) -> RepoGuess:
        if self.ask:
            return RepoGuess(
                ticket_id=ticket.id,
                repo=None,
                confidence="low",
                signal="prose",
                decision="ask",
                candidates=["acme/api", "acme/web"],
                question="Which repository: acme/api or acme/web?",
                question_comment_id="comment-1",
            )
        return RepoGuess(
            ticket_id=ticket.id,
            repo="acme/api",
            confidence="high",
            signal="declaration",
            decision="proceed",
            model_verdict="confirmed",
            calls=[call("repo_confirmer", "cheap", 0.01)],
        )

    def phase_context_pack(self, order: WorkOrder, repo_guess: RepoGuess) -> ContextPack:
        ticket, guess = order.ticket, repo_guess
        text = "def retry():\n    pass\n"
        return ContextPack(
            ticket_id=ticket.id,
            repo=guess.repo or "",
            clone_url=f"https://github.com/{guess.repo}.git",
            default_branch="main",
            base_sha=SHA,
            branch=f"veranda/{ticket.id.lower()}",
            seeds=["retry"],
            searches=1,
            bytes=len(text.encode()),
            files=[PackFile(path="api/retry.py", windows=[Window(start=1, end=2, text=text)])],
            citations=[Citation(id="C1", path="api/retry.py", start=1, end=2, sha=SHA)],
        )

    def phase_red_tests(self, order: WorkOrder, context_pack: ContextPack) -> RedTests:
        ticket, pack = order.ticket, context_pack
        return RedTests(
            ticket_id=ticket.id,
            branch=pack.branch,
            base_sha=pack.base_sha,
            commit_sha="c" * 40,
            test_files=[f"tests/test_{ticket.title.split()[-1]}.py"],  # shows the ticket's origin
            base_run=CommandResult(command="pytest -q", exit_code=1, output_tail="1 failed"),
            attempts=1,
            calls=[call("test_writer")],
        )

    def phase_patch(self, order: WorkOrder, red_tests: RedTests) -> Patch:
        ticket, pack = order.ticket, packed(order)
        return Patch(
            ticket_id=ticket.id,
            branch=pack.branch,
            commit_sha=HEAD,
            files_changed=["api/retry.py"],
            attempts=1,
            validation=[CommandResult(command="pytest -q", exit_code=0)],
            calls=[call("implementer"), call("second_test_writer")],
        )

    def phase_pull_request(self, order: WorkOrder, patch: Patch) -> PullRequest:
        ticket = order.ticket
        return PullRequest(
            ticket_id=ticket.id,
            number=7,
            url="https://github.com/acme/api/pull/7",
            title=f"{ticket.id}: {ticket.title}",
            body="Fixes retries (C1)",
            branch=patch.branch,
            head_sha=patch.commit_sha,
            citations_resolved=["C1"],
        )

    def phase_review_rounds(self, order: WorkOrder, pull_request: PullRequest) -> ReviewRounds:
        ticket, pr = order.ticket, pull_request
        return ReviewRounds(
            ticket_id=ticket.id,
            rounds=[ReviewRound(index=1, findings=[], fixed=True)],
            stopped="clean",
            head_sha=pr.head_sha,
            calls=[call("reviewer", "standard", 0.05)],
        )

    def phase_ci_outcome(self, order: WorkOrder, review_rounds: ReviewRounds) -> CIOutcome:
        ticket, review = order.ticket, review_rounds
        return CIOutcome(ticket_id=ticket.id, status="success", head_sha=review.head_sha, polls=2)

    def phase_feedback(self, order: WorkOrder, partition_key: str) -> Feedback:
        ticket = order.ticket
        previous = previous_feedback(ValueStore(base_dir=self.values_dir), partition_key)
        done = list(previous.processed_comment_ids) if previous else []
        rounds = list(previous.rounds) if previous else []
        new = f"comment-{len(done) + 1}"
        rounds.append(FeedbackRound(index=len(rounds) + 1, comment_ids=[new]))
        return Feedback(
            ticket_id=ticket.id, rounds=rounds, processed_comment_ids=[*done, new], head_sha=HEAD
        )


def resources(counter_dir: str, values_dir: str, **scripted: Any) -> dict[str, Any]:
    """The offline resources, the value store in ``values_dir`` and the scripted domain."""
    store = ValueStore(store_kind="filesystem", base_dir=values_dir)
    domain = ScriptedDomain(counter_dir=counter_dir, values_dir=values_dir, **scripted)
    return {
        **nested(),
        DOMAIN_CALLS_KEY: domain,
        "value_store": store,
        "io_manager": VerandaIOManager(store=store),
    }


def fake_definitions(
    counter_dir: str,
    values_dir: str,
    executor: dg.ExecutorDefinition = dg.in_process_executor,
    **scripted: Any,
) -> dg.Definitions:
    from veranda_dagster.assets import CHECKS, PHASE_ASSETS
    from veranda_dagster.jobs import ticket_run

    return dg.Definitions(
        assets=PHASE_ASSETS,
        asset_checks=CHECKS,
        jobs=[ticket_run],
        resources=resources(counter_dir, values_dir, **scripted),
        executor=executor,
    )
