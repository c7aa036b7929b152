"""Each phase asset's own call hands the workspace resource's validation bound to the domain entry
point of every phase that runs the repo's own commands: red tests, patch, review rounds and
feedback; and every phase in the registry has exactly one such call."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.resources import phase_call
from veranda_dagster.assets._shell import PHASE_CALLS
from veranda_dagster.domain.core.models import (
    CommandResult,
    ContextPack,
    Patch,
    PullRequest,
    RedTests,
    Ticket,
    WorkOrder,
)
from veranda_dagster.domain.core.phases import PHASES as REGISTERED_PHASES
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

UPSTREAM: dict[str, Any] = {
    "order": WorkOrder(ticket=TICKET, pack=PACK),
    "ticket": TICKET,
    "context_pack": PACK,
    "red_tests": RED,
    "patch": PATCH,
    "pull_request": PR,
}
PHASES = [
    ("work.red_tests", "write_red_tests", "red_tests"),
    ("work.patch", "implement", "patch"),
    ("deliver.review", "review_rounds", "review_rounds"),
    ("deliver.feedback", "process_feedback", "feedback"),
]


def test_every_registered_phase_has_one_asset_call_and_nothing_else_does() -> None:
    import veranda_dagster.assets  # noqa: F401  (declares the calls)

    assert set(PHASE_CALLS) == set(REGISTERED_PHASES)


@pytest.mark.parametrize(("module", "function", "phase"), PHASES)
def test_the_configured_validation_bound_reaches_the_phase(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, module: str, function: str, phase: str
) -> None:
    seen: dict[str, Any] = {}

    def capture(*args: Any, **kwargs: Any) -> str:
        seen.update(kwargs)
        return "done"

    monkeypatch.setattr(f"veranda_dagster.domain.{module}.{function}", capture)
    workspace = WorkspaceResource(root=str(tmp_path), validation_timeout_s=7.0)
    if phase == "feedback":  # it continues from the stored value: none yet
        import sys

        feedback_module = sys.modules["veranda_dagster.assets.feedback"]  # shadowed by the asset
        monkeypatch.setattr(feedback_module, "previous_feedback", lambda *a: None)
    given = {**UPSTREAM, "workspace": workspace, "value_store": None, "context": _Keyed()}
    assert phase_call(phase, **given) == "done"
    assert seen["validation_timeout_s"] == 7.0


class _Keyed:
    """The one thing a phase call reads of its Dagster context: the partition key."""

    partition_key = "ENG-9"


def test_the_scripted_domain_answers_every_registered_phase_and_refuses_any_other(
    tmp_path: Any,
) -> None:
    """The asset tests' stand-in is swapped in as a resource; a phase it has no answer for (a
    new one) fails loudly instead of running its real code."""
    from tests.assets.fakes import ScriptedDomain, UnscriptedPhaseError

    scripted = ScriptedDomain(counter_dir=str(tmp_path), values_dir=str(tmp_path / "values"))
    assert all(callable(getattr(scripted, f"phase_{name}", None)) for name in REGISTERED_PHASES)

    def real_call() -> str:
        raise AssertionError("the real call ran")

    with pytest.raises(UnscriptedPhaseError, match="no answer for phase 'triage'"):
        scripted.call("triage", real_call, {"ticket": TICKET})
    value = scripted.call("repo_guess", real_call, {"ticket": TICKET, "partition_key": "ENG-9"})
    assert value.repo == "acme/api"  # type: ignore[attr-defined]
