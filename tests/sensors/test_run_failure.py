"""A failed run posts one note on its ticket: the phase, the error type, what is kept, how to
rerun; never a secret, never twice."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.assets.fakes import ScriptedDomain, resources
from tests.support.resources import tickets
from veranda_dagster.assets import CHECKS, PHASE_ASSETS
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Patch, RedTests, WorkOrder
from veranda_dagster.domain.core.run_failure import (
    MAX_ERROR_LINE_CHARS,
    RunFailure,
    failure_note,
)
from veranda_dagster.jobs import ticket_run
from veranda_dagster.partitions import TICKET_JOB
from veranda_dagster.resources.domain_calls import DOMAIN_CALLS_KEY
from veranda_dagster.sensors.run_failure import ticket_run_failures
from veranda_dagster.sim.linear_fake import LinearFake
from veranda_dagster.sources.linear.client import LinearClient
from veranda_dagster.sources.linear.resource import LinearResource
from veranda_dagster.sources.sensor_status import SENSORS_ENV, sensor_default_status
from veranda_dagster.storage import ValueStore

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "lin_api_TEST_run_failure_token_0001"
DB_PASSWORD = "hunter2-db-password-xyz"


class BrokenPatchDomain(ScriptedDomain):
    """``patch`` fails with a typed error whose message quotes a URL with a password."""

    def phase_patch(self, order: WorkOrder, red_tests: RedTests) -> Patch:
        raise ConfigError(f"cannot reach postgresql://veranda:{DB_PASSWORD}@db:5432/x")


@pytest.fixture
def linear():
    with LinearFake(token=TOKEN) as fake:
        yield fake


def failed_run(tmp_path: Path, key: str) -> tuple[dg.DagsterInstance, str, ValueStore]:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    res = resources(str(tmp_path), str(tmp_path / "values"))
    res[DOMAIN_CALLS_KEY] = BrokenPatchDomain(
        counter_dir=str(tmp_path), values_dir=str(tmp_path / "values")
    )
    defs = dg.Definitions(
        assets=PHASE_ASSETS,
        asset_checks=CHECKS,
        jobs=[ticket_run],
        resources=res,
        executor=dg.in_process_executor,
    )
    instance = dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))
    instance.add_dynamic_partitions("tickets", [key])
    result = defs.resolve_job_def(TICKET_JOB).execute_in_process(
        partition_key=key, instance=instance, raise_on_error=False
    )
    assert not result.success
    return instance, result.run_id, res["value_store"]


def evaluate(instance: dg.DagsterInstance, run_id: str, store: ValueStore, url: str) -> None:
    run = instance.get_run_by_id(run_id)
    assert run is not None
    (event,) = [
        e.dagster_event
        for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
        if e.dagster_event is not None
    ]
    # nested ConfigurableResources are built as context managers: enter the context
    with dg.build_run_status_sensor_context(
        sensor_name="ticket_run_failures",
        dagster_event=event,
        dagster_instance=instance,
        dagster_run=run,
        resources={
            "tickets": tickets(linear=LinearResource(api_key=TOKEN, base_url=url)),
            "value_store": store,
        },
    ) as context:
        ticket_run_failures(context.for_run_failure())


def test_a_failed_run_posts_one_note_naming_phase_error_kept_phases_and_rerun(
    tmp_path: Path, linear: LinearFake, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("VERANDA_UI_URL", "http://127.0.0.1:3999")
    closed: list[bool] = []
    real_close = LinearClient.close

    def close(self: LinearClient) -> None:
        real_close(self)
        closed.append(self._client.is_closed)

    monkeypatch.setattr(LinearClient, "close", close)
    key = linear.file_ticket("Fix retries", "repo: acme/api")["identifier"]
    instance, run_id, store = failed_run(tmp_path, key)
    with instance:
        evaluate(instance, run_id, store, linear.graphql_url)
        (note,) = linear.bot_comments(key)
        assert "phase `patch`" in note and "`ConfigError`" in note
        assert "Stored phases are kept: `ticket`, `repo_guess`, `context_pack`, `red_tests`" in note
        assert "Re-execute > From failure" in note
        assert f"http://127.0.0.1:3999/runs/{run_id}" in note
        assert DB_PASSWORD not in note and TOKEN not in note
        assert closed == [True]  # the daemon lives for weeks: its client is closed, not left

        # the same failed run handed over again (a reset cursor, a second daemon): no repeat
        evaluate(instance, run_id, store, linear.graphql_url)
        assert len(linear.bot_comments(key)) == 1


def test_a_run_that_will_be_retried_is_not_told(tmp_path: Path, linear: LinearFake):
    key = linear.file_ticket("Fix retries", "repo: acme/api")["identifier"]
    instance, run_id, store = failed_run(tmp_path, key)
    with instance:
        instance.add_run_tags(run_id, {"dagster/will_retry": "true"})
        evaluate(instance, run_id, store, linear.graphql_url)
        assert linear.bot_comments(key) == []


def test_a_note_before_any_phase_finished_says_the_rerun_starts_at_the_ticket():
    note = failure_note(
        RunFailure(ticket="ENG-1", run_id="abc", phase=None, error_type="RunFailure")
    )
    assert "the run itself" in note and "No phase had finished yet" in note


def test_sensors_ship_stopped_and_the_environment_turns_them_on(monkeypatch):
    monkeypatch.delenv(SENSORS_ENV, raising=False)
    assert sensor_default_status() == dg.DefaultSensorStatus.STOPPED
    monkeypatch.setenv(SENSORS_ENV, "running")
    assert sensor_default_status() == dg.DefaultSensorStatus.RUNNING
    monkeypatch.setenv(SENSORS_ENV, "maybe")
    with pytest.raises(ConfigError, match=SENSORS_ENV):
        sensor_default_status()


def test_a_retried_upstream_error_heads_the_run_and_the_note_with_its_root_cause(
    tmp_path: Path, linear: LinearFake
) -> None:
    """``patch``'s model answers 500 on every attempt until its RetryPolicy runs out: the step's
    failure on the run page and the ticket's note both say the root cause in one line (phase,
    error type, the upstream status and message), not Dagster's "Exceeded max_retries"."""
    from tests.sensors.upstream_failure_run import UPSTREAM_DETAIL

    key = linear.file_ticket("Fix retries", "repo: acme/api")["identifier"]
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "VERANDA_MODEL_RETRY_DELAY_S": "0", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "tests.sensors.upstream_failure_run", str(home), key],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    run_id = out.stdout.strip().splitlines()[-1]
    store = ValueStore(store_kind="filesystem", base_dir=str(tmp_path / "values"))
    headline = f"patch: VendorError: upstream: {UPSTREAM_DETAIL}"
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        kinds = [
            e.dagster_event.event_type_value
            for e in instance.all_logs(run_id)
            if e.dagster_event is not None and e.step_key == "patch"
        ]
        assert kinds.count("STEP_UP_FOR_RETRY") == 1 and kinds.count("STEP_FAILURE") == 1
        (failure,) = instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
        data = failure.dagster_event.step_failure_data  # type: ignore[union-attr]
        assert data.user_failure_data is not None
        assert data.user_failure_data.description == headline  # what the run page shows
        assert "max_retries" not in headline
        evaluate(instance, run_id, store, linear.graphql_url)
    (note,) = linear.bot_comments(key)
    first = note.splitlines()[0]
    assert first == (
        f"Veranda's run for {key} failed at phase `patch`: `VendorError` "
        f"(upstream: {UPSTREAM_DETAIL})."
    )
    assert "max_retries" not in note and "success:" not in note


def test_a_long_or_multiline_cause_is_one_scrubbed_bounded_line() -> None:
    note = failure_note(
        RunFailure(
            ticket="ENG-1",
            run_id="abc",
            phase="patch",
            error_type="ConfigError",
            error_line=f"bad\nurl postgresql://u:{DB_PASSWORD}@h/x " + "y" * 500,
        )
    )
    first = note.splitlines()[0]
    assert DB_PASSWORD not in first and "bad url postgresql://" in first
    assert len(first) < MAX_ERROR_LINE_CHARS + 120 and "…" in first
