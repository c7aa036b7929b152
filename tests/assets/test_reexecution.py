"""Re-execution from failure: finished phases are loaded, not recomputed (nor re-billed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.assets import recon
from tests.assets.fakes import read_calls
from veranda_dagster.assets._run_title import TITLE_TAG
from veranda_dagster.domain.core.models import CIOutcome, Feedback, PullRequest
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.types import VALUE_TYPES

KEY = "ENG-7"
ROOT = Path(__file__).resolve().parents[2]


def _instance(home: Path) -> dg.DagsterInstance:
    """A new instance object on the same DAGSTER_HOME, as a new process would build it."""
    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))


@pytest.fixture
def job_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    paths = {"home": tmp_path / "home", "calls": tmp_path / "calls", "values": tmp_path / "v"}
    for path in paths.values():
        path.mkdir()
    shutil.copy(ROOT / "dagster.yaml", paths["home"] / "dagster.yaml")  # the shipped instance
    monkeypatch.setenv(recon.COUNTER_ENV, str(paths["calls"]))
    monkeypatch.setenv(recon.VALUES_ENV, str(paths["values"]))
    monkeypatch.setenv(recon.FAIL_ONCE_ENV, "context_pack")
    return paths


def test_third_asset_fails_then_reexecution_from_failure_skips_finished(job_env):
    job = dg.reconstructable(recon.ticket_job)
    with _instance(job_env["home"]) as instance:
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert instance.run_retries_enabled and instance.run_retries_max_retries == 2
        instance.add_dynamic_partitions("tickets", [KEY])
        with dg.execute_job(job, instance, tags={"dagster/partition": KEY}) as first:
            assert not first.success
            failed = [e.step_key for e in first.all_events if e.is_step_failure]
            assert failed == ["context_pack"]
            first_id = first.run_id
        assert read_calls(job_env["calls"]) == {"ticket": 1, "repo_guess": 1, "context_pack": 1}

    with _instance(job_env["home"]) as instance:
        options = dg.ReexecutionOptions.from_failure(first_id, instance)
        # execute_job does not copy the parent's tags (the UI and run_retries do), so the
        # partition tag is passed again, as a re-execution from the UI would inherit it.
        tags = {"dagster/partition": KEY}
        with dg.execute_job(job, instance, reexecution_options=options, tags=tags) as second:
            assert second.success
            assert second.dagster_run.tags["dagster/partition"] == KEY
            ran = {e.step_key for e in second.all_events if e.is_step_success}
            # the ticket's title is on both runs: tagged by ticket, copied by the rerun
            parent = instance.get_run_by_id(first_id)
            assert parent is not None and parent.tags[TITLE_TAG].startswith("Fix retries")
            rerun = instance.get_run_by_id(second.run_id)
            assert rerun is not None and rerun.tags[TITLE_TAG] == parent.tags[TITLE_TAG]
        assert "ticket" not in ran and "repo_guess" not in ran

    calls = read_calls(job_env["calls"])
    assert calls["ticket"] == 1 and calls["repo_guess"] == 1, calls
    assert calls["context_pack"] == 2
    assert all(
        calls[a] == 1 for a in VALUE_TYPES if a not in {"ticket", "repo_guess", "context_pack"}
    )

    store = ValueStore(base_dir=str(job_env["values"]))
    for asset, model in VALUE_TYPES.items():
        assert isinstance(store.load(asset, KEY), model), asset
    ci = store.load("ci_outcome", KEY)
    assert isinstance(ci, CIOutcome) and ci.status == "success"
    pr = store.load("pull_request", KEY)
    assert isinstance(pr, PullRequest) and pr.head_sha == "b" * 40
    fb = store.load("feedback", KEY)
    assert isinstance(fb, Feedback) and fb.processed_comment_ids == ["comment-1"]

    with _instance(job_env["home"]) as instance:
        for asset in VALUE_TYPES:
            event = instance.get_latest_materialization_event(dg.AssetKey(asset))
            assert event is not None and event.asset_materialization.partition == KEY
