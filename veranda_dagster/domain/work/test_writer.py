"""The second test-writer seat: same vendor allowed, different instructions, no memory.

The model that just convinced itself the change is correct is its worst reviewer, so this seat
gets a fresh prompt built from the ticket and the diff only (never the implementer's transcript
or summary). Its tests must pass; one that fails is a real defect and goes back to the
implementer, within the patch phase's bound. It may only add test files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.core.agent import AgentPort
from veranda_dagster.domain.core.bounds import VALIDATION_TIMEOUT_S
from veranda_dagster.domain.core.models import CommandResult, ContextPack, ModelCall, Ticket
from veranda_dagster.domain.work.prompts import second_writer_prompt
from veranda_dagster.domain.work.red_tests import run_red_tests
from veranda_dagster.domain.work.turn import (
    is_test_path,
    revert,
    turn,
    worktree_changes,
)

ROLE = "second_test_writer"


@dataclass
class ExtraTests:
    files: list[str]
    run: CommandResult | None
    call: ModelCall
    discarded: list[str] = field(default_factory=list)
    """Non-test files the seat touched: reverted, because this seat must not change the code."""

    @property
    def failing(self) -> bool:
        return self.run is not None and not self.run.ok


def write_extra_tests(
    ticket: Ticket,
    pack: ContextPack,
    workspace: Workspace,
    agent: AgentPort,
    diff: str,
    *,
    validation_timeout_s: float = VALIDATION_TIMEOUT_S,
) -> ExtraTests:
    """One turn of the independent seat in the clone the patch phase prepared (with the
    implementer's uncommitted change in it), then its new tests run once."""
    repo = workspace.path
    before = set(worktree_changes(workspace))
    prompt = second_writer_prompt(ticket, pack, diff)
    reply = turn(agent, ROLE, "standard", prompt, repo, ticket, tools=pack.mcp_servers)
    touched = [p for p in worktree_changes(workspace) if p not in before]
    files = [p for p in touched if is_test_path(p)]
    discarded = [p for p in touched if not is_test_path(p)]
    revert(workspace, discarded)
    run = None
    if files:
        run = run_red_tests(pack, files, repo, validation_timeout_s)
    return ExtraTests(files=files, run=run, call=reply.call, discarded=discarded)
