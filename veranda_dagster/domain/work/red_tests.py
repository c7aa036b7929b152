"""The red phase: tests derived from the ticket that fail on the base, for the right reason.

A definition of done that predates the patch is only worth having if it really fails first, and
fails because the behaviour is missing. So the phase runs the new tests on the base and rejects:

- tests that pass (they define nothing);
- a run that errors before any test executes: pytest exit 2 (collection error, which is how an
  import of a missing module at the top of a test file shows), 3/4 (internal/usage) or 5 (no
  tests collected), or ``SyntaxError`` anywhere;
- a ``ModuleNotFoundError``/``ImportError`` raised *inside* a test (exit 1), unless the missing
  module is named in the ticket: then it is the thing to be created and the failure is right.
  Anything else is a typo'd path or a missing dependency, which no implementation will fix.

A rejected attempt's files are reverted and the reason goes into the next prompt, up to
``MAX_RED_TEST_ATTEMPTS``; accepted tests are committed on the work branch and pushed.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from veranda_dagster.domain.clone.active_environment import setup_outcome
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.core.agent import AgentPort
from veranda_dagster.domain.core.bounds import MAX_RED_TEST_ATTEMPTS, VALIDATION_TIMEOUT_S
from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.domain.core.models import (
    CommandResult,
    ContextPack,
    ModelCall,
    RedTests,
    Ticket,
)
from veranda_dagster.domain.work.prompts import red_tests_prompt
from veranda_dagster.domain.work.turn import (
    commit_and_push,
    is_test_path,
    phase_commits,
    prepare,
    revert,
    turn,
    worktree_changes,
)
from veranda_dagster.domain.work.validation import run_command

PHASE = "red_tests"
_MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")
_IMPORT_ERROR = re.compile(r"\b(?:ModuleNotFoundError|ImportError)\b")


class RedTestsRejected(VerandaError):
    """Every attempt's tests were rejected; ``reasons`` says why, one per attempt."""

    def __init__(self, ticket_id: str, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__(
            f"{ticket_id}: no acceptable red tests after {len(reasons)} attempts: "
            + "; ".join(reasons)
        )


def red_test_command(pack: ContextPack, files: list[str]) -> str:
    """How to run just ``files``: pytest for Python, ``go test`` on their packages, else the
    repository's own test command (the whole suite must then fail)."""
    quoted = " ".join(shlex.quote(f) for f in files)
    if files and all(f.endswith(".py") for f in files):
        return f"python -m pytest -q -p no:cacheprovider {quoted}"
    if files and all(f.endswith("_test.go") for f in files):
        dirs = sorted({("./" + f.rsplit("/", 1)[0]) if "/" in f else "." for f in files})
        return "go test " + " ".join(shlex.quote(d) for d in dirs)
    return " && ".join(pack.facts.test) or f"python -m pytest -q {quoted}"


def run_red_tests(
    pack: ContextPack, files: list[str], repo: str | Path, timeout_s: float
) -> CommandResult:
    """Just ``files``, run in the clone within ``timeout_s`` and with the network the
    repository's facts allow: how every phase that judges tests (this one, the patch's check,
    the second test writer) runs them."""
    command = red_test_command(pack, files)
    return run_command(command, repo, timeout_s)


def _named_in_ticket(module: str, ticket: Ticket) -> bool:
    text = f"{ticket.title}\n{ticket.description}"
    path = module.replace(".", "/")
    leaf = module.rsplit(".", 1)[-1]
    return (
        module in text or path in text or re.search(rf"\b{re.escape(leaf)}\.py\b", text) is not None
    )


def judge(run: CommandResult, ticket: Ticket, pytest: bool) -> str | None:
    """Why this base run is not a right-reason red, or ``None`` when it is."""
    out = run.output_tail
    if run.timed_out:
        return f"the tests hung on the base (killed at the bound after {run.duration_s:.1f}s)"
    if run.exit_code == 0:
        return "the tests pass on the base, so they define nothing the patch must do"
    if "SyntaxError" in out:
        return "the tests do not parse (SyntaxError)"
    if pytest and run.exit_code == 5:
        return "pytest collected no tests"
    if pytest and run.exit_code in (2, 3, 4):
        what = "an import error at collection" if _IMPORT_ERROR.search(out) else "a usage error"
        return f"pytest stopped before running any test (exit {run.exit_code}: {what})"
    if _IMPORT_ERROR.search(out):
        missing = _MISSING_MODULE.findall(out)
        if not missing or not all(_named_in_ticket(m, ticket) for m in missing):
            named = ", ".join(sorted(set(missing))) or "a name"
            return f"the tests fail on an import of {named} the ticket does not ask to create"
    return None


def _adopt(workspace: Workspace, pack: ContextPack) -> list[str] | None:
    """Red tests already on the branch (a re-executed run): their files, if HEAD is the red
    commit right on top of the base."""
    head = workspace.head_sha()
    if head == pack.base_sha:
        return None
    body = workspace.git("log", "-1", "--format=%B", head)
    parent = workspace.git("rev-parse", f"{head}^")
    if phase_commits(body, PHASE) and parent == pack.base_sha:
        return workspace.changed_files(pack.base_sha)
    workspace.git("reset", "--quiet", "--hard", pack.base_sha)  # start this phase over
    return None


def write_red_tests(
    ticket: Ticket,
    pack: ContextPack,
    workspace: Workspace,
    agent: AgentPort,
    *,
    validation_timeout_s: float = VALIDATION_TIMEOUT_S,
) -> RedTests:
    """``validation_timeout_s`` bounds each base run of the new tests (a hung one is killed
    and rejected, so a repo whose tests hang cannot stall the phase)."""
    repo = prepare(workspace, pack)
    calls: list[ModelCall] = []
    rejected: list[str] = []
    adopted = _adopt(workspace, pack)
    if adopted:
        run = run_red_tests(pack, adopted, repo, validation_timeout_s)
        if judge(run, ticket, adopted[0].endswith(".py")) is None:
            return _value(ticket, pack, workspace, adopted, run, 0, rejected, calls)
        workspace.git("reset", "--quiet", "--hard", pack.base_sha)
        rejected.append("tests already on the branch are no longer red; written again")
    for attempt in range(1, MAX_RED_TEST_ATTEMPTS + 1):
        reply = turn(
            agent,
            "test_writer",
            "standard",
            red_tests_prompt(ticket, pack, rejected),
            repo,
            ticket,
            tools=pack.mcp_servers,
        )
        calls.append(reply.call)
        changed = worktree_changes(workspace)
        tests = [p for p in changed if is_test_path(p)]
        other = [p for p in changed if not is_test_path(p)]
        reason: str | None
        if other:
            reason = f"the test writer changed code, not only tests: {', '.join(other[:5])}"
        elif not tests:
            reason = "no test files were written"
        else:
            run = run_red_tests(pack, tests, repo, validation_timeout_s)
            reason = judge(run, ticket, all(t.endswith(".py") for t in tests))
        if reason is None:
            subject = f"test({ticket.id}): red tests for {ticket.title}"[:72]
            commit_and_push(workspace, tests, subject, PHASE)
            return _value(ticket, pack, workspace, tests, run, attempt, rejected, calls)
        rejected.append(f"attempt {attempt}: {reason}")
        revert(workspace, changed)
    raise RedTestsRejected(ticket.id, rejected)


def _value(
    ticket: Ticket,
    pack: ContextPack,
    workspace: Workspace,
    tests: list[str],
    run: CommandResult,
    attempts: int,
    rejected: list[str],
    calls: list[ModelCall],
) -> RedTests:
    return RedTests(
        ticket_id=ticket.id,
        calls=calls,
        branch=workspace.branch,
        base_sha=pack.base_sha,
        commit_sha=workspace.head_sha(),
        test_files=tests,
        base_run=run,
        attempts=attempts,
        rejected=rejected,
        setup=setup_outcome(workspace.path),
    )
