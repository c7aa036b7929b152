"""``PipelineResource`` hands the workspace resource's validation bound to every phase that runs the
repo's own commands: red tests, patch, review rounds and feedback."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.resources import pipeline as make_pipeline
from veranda_dagster.domain.core.models import (
    CommandResult,
    ContextPack,
    Patch,
    PullRequest,
    RedTests,
    Ticket,
)
from veranda_dagster.resources.workspace import WorkspaceResource

TICKET = Ticket(id="ENG-9", source="linear", title="t")
PACK = ContextPack(
    ticket_id="ENG-9",
    repo="acme/api",
    clone_url="/nowhere/acme/api.git",
    default_branch="main",
    base_sha="a" * 40,
    branch="veranda/eng-9",
)
RED = RedTests(
    ticket_id="ENG-9",
    branch="veranda/eng-9",
    base_sha="a" * 40,
    commit_sha="b" * 40,
    test_files=["tests/test_x.py"],
    base_run=CommandResult(command="pytest", exit_code=1),
    attempts=1,
)
PATCH = Patch(
    ticket_id="ENG-9", branch="veranda/eng-9", commit_sha="c" * 40, files_changed=[], attempts=1
)
PR = PullRequest(
    ticket_id="ENG-9",
    number=1,
    url="u",
    title="t",
    body="b",
    branch="veranda/eng-9",
    head_sha="c" * 40,
)

PHASES = [
    ("work.red_tests", "write_red_tests", lambda p: p.write_red_tests(TICKET, PACK)),
    ("work.patch", "implement", lambda p: p.implement(TICKET, PACK, RED)),
    ("deliver.review", "review_rounds", lambda p: p.review(TICKET, PACK, PR)),
    ("deliver.feedback", "process_feedback", lambda p: p.process_feedback(TICKET, PACK, PR, None)),
]


@pytest.mark.parametrize(("module", "function", "invoke"), PHASES)
def test_the_configured_validation_bound_reaches_the_phase(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, module: str, function: str, invoke: Any
) -> None:
    seen: dict[str, Any] = {}

    def capture(*args: Any, **kwargs: Any) -> str:
        seen.update(kwargs)
        return "done"

    monkeypatch.setattr(f"veranda_dagster.domain.{module}.{function}", capture)
    workspace = WorkspaceResource(root=str(tmp_path), validation_timeout_s=7.0)
    pipeline = make_pipeline(workspace=workspace)
    assert invoke(pipeline) == "done"
    assert seen["validation_timeout_s"] == 7.0
