"""``IntakeProcess``: the real ``veranda intake serve`` as ``veranda dev`` starts it, on a
SQLite ``DAGSTER_HOME`` with the shipped ``dagster.yaml`` and the workspace file ``dagster dev``
reads. It verifies with the secret it was given alone (an outer ``LINEAR_WEBHOOK_SECRET`` is
dropped), queues the ticket's run, and a receiver that cannot start says why within its bound."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.support.processes import ROOT
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.sim.dagster_dev import WORKSPACE_YAML
from veranda_dagster.sim.push_intake import (
    IntakeProcess,
    IntakeStartError,
    linear_issue_body,
    post_signed_linear,
)

BOT = "bot-1"
FAILED_START_BOUND_S = 60.0
"""A receiver whose workspace file is missing exits after its imports, far inside
INTAKE_START_TIMEOUT_S; the error comes as soon as it has exited."""


def _home(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    workspace = home / "workspace.yaml"
    workspace.write_text(WORKSPACE_YAML)
    return home, workspace


def test_the_receiver_verifies_with_its_own_secret_and_queues_the_run(tmp_path: Path) -> None:
    home, workspace = _home(tmp_path)
    env = {"LINEAR_WEBHOOK_SECRET": "outer-secret", "LINEAR_BOT_USER_ID": BOT}
    with IntakeProcess(home, workspace, env) as intake:
        assert intake.secret != "outer-secret"
        body = linear_issue_body("ENG-900", assignee_id=BOT, delivery_id="d-1")
        assert post_signed_linear(intake.linear_url, "outer-secret", body) == 401
        body = linear_issue_body("ENG-900", assignee_id=BOT, delivery_id="d-2")
        assert post_signed_linear(intake.linear_url, intake.secret, body) == 201
        proc = intake.proc
    assert proc is not None and proc.poll() is not None, "stopped with its context"
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        runs = instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: "ENG-900"}))
        assert [r.status for r in runs] == [dg.DagsterRunStatus.QUEUED]


def test_a_receiver_that_cannot_start_says_why(tmp_path: Path) -> None:
    home, workspace = _home(tmp_path)
    workspace.unlink()
    started = time.monotonic()
    with pytest.raises(IntakeStartError, match="exited"):
        IntakeProcess(home, workspace, {}).start()
    assert time.monotonic() - started < FAILED_START_BOUND_S


def test_the_start_wait_is_bounded(tmp_path: Path) -> None:
    """INTAKE_START_TIMEOUT_S is what ``start`` waits by default; a shorter bound is hit and
    the process is stopped, not left behind."""
    home, workspace = _home(tmp_path)
    intake = IntakeProcess(home, workspace, {})
    with pytest.raises(IntakeStartError, match=r"not listening after 0\.01 s"):
        intake.start(timeout=0.01)
    assert intake.proc is None
