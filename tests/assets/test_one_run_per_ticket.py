"""One run per ticket, whoever launched it: a run of a ticket that already has an older run in
progress stops at its first step, with a typed error naming the other run, before any call;
the older run's own steps carry on. Real instance (a temp ``DAGSTER_HOME``), real assets."""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.assets.fakes import read_calls, resources
from veranda_dagster.assets import PHASE_ASSETS, _shell
from veranda_dagster.assets._shell import PARTITION_TAG, older_run_in_progress
from veranda_dagster.partitions import TICKET_TAG

KEY = "ENG-40"
RUN = dg.DagsterRunStatus


@pytest.fixture
def instance(tmp_path):
    (tmp_path / "home").mkdir()
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path / "home"))) as inst:
        inst.add_dynamic_partitions("tickets", [KEY, "ENG-41"])
        yield inst


def _run(instance, run_id: str, status, **tags: str) -> str:
    instance.add_run(dg.DagsterRun(job_name="ticket_run", run_id=run_id, status=status, tags=tags))
    return run_id


def test_only_the_younger_of_two_in_progress_twins_yields(instance):
    older = _run(instance, "a" * 36, RUN.STARTED, **{TICKET_TAG: KEY})
    younger = _run(instance, "b" * 36, RUN.STARTING, **{TICKET_TAG: KEY})
    assert older_run_in_progress(instance, younger, KEY) == older
    assert older_run_in_progress(instance, older, KEY) is None
    _run(instance, "c" * 36, RUN.STARTED, **{TICKET_TAG: "ENG-41"})  # another ticket
    assert older_run_in_progress(instance, older, KEY) is None


def test_finished_runs_do_not_hold_the_ticket_but_unstarted_and_untagged_ones_do(instance):
    for i, status in enumerate([RUN.SUCCESS, RUN.FAILURE, RUN.CANCELED]):
        _run(instance, f"{i}" * 36, status, **{TICKET_TAG: KEY})
    me = _run(instance, "m" * 36, RUN.STARTED, **{TICKET_TAG: KEY})
    assert older_run_in_progress(instance, me, KEY) is None

    backfill = _run(instance, "f" * 36, RUN.NOT_STARTED, **{PARTITION_TAG: "ENG-41"})
    late = _run(instance, "g" * 36, RUN.STARTED, **{TICKET_TAG: "ENG-41"})
    assert older_run_in_progress(instance, late, "ENG-41") == backfill


def test_a_manual_launch_beside_a_running_ticket_stops_before_any_call(instance, tmp_path):
    calls, values = tmp_path / "calls", tmp_path / "values"
    calls.mkdir()
    in_flight = _run(instance, "s" * 36, RUN.STARTED, **{TICKET_TAG: KEY, PARTITION_TAG: KEY})
    result = dg.materialize(
        PHASE_ASSETS,
        partition_key=KEY,
        instance=instance,
        resources=resources(str(calls), str(values)),
        tags={TICKET_TAG: KEY},
        raise_on_error=False,
    )
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert failure.step_key == "ticket"
    message = failure.step_failure_data.error.message
    assert "TicketRunInProgressError" in message and in_flight in message
    assert failure.step_failure_data.user_failure_data.metadata["retryable"].value is False
    assert read_calls(calls) == {}  # not even the ticket fetch, let alone a model
    assert not any(values.rglob("*.json"))

    instance.report_run_failed(instance.get_run_by_id(in_flight), "worker died")
    again = dg.materialize(
        PHASE_ASSETS[:2],
        partition_key=KEY,
        instance=instance,
        resources=resources(str(calls), str(values)),
    )
    assert again.success and read_calls(calls)["ticket"] == 1


def test_a_run_asks_about_twins_at_its_first_phase_only(instance, tmp_path, monkeypatch):
    """The twin check costs runs queries; a run that found no older twin cannot meet one later
    (a later run is younger and yields itself), so its other phases do not ask again."""
    calls, values = tmp_path / "calls", tmp_path / "values"
    calls.mkdir()
    asked: list[str] = []
    real = _shell.older_run_in_progress

    def counting(inst, run_id: str, key: str) -> str | None:
        asked.append(run_id)
        return real(inst, run_id, key)

    monkeypatch.setattr(_shell, "older_run_in_progress", counting)
    result = dg.materialize(
        PHASE_ASSETS,
        partition_key=KEY,
        instance=instance,
        resources=resources(str(calls), str(values)),
        tags={TICKET_TAG: KEY},
    )
    assert result.success
    assert sum(read_calls(calls).values()) == len(PHASE_ASSETS) > 1
    assert asked == [result.run_id]

    # a second run of the ticket while the first is (again) in progress: it still yields
    instance.add_run(
        dg.DagsterRun(
            job_name="ticket_run", run_id="o" * 36, status=RUN.STARTED, tags={TICKET_TAG: KEY}
        )
    )
    twin = dg.materialize(
        PHASE_ASSETS[:1],
        partition_key=KEY,
        instance=instance,
        resources=resources(str(calls), str(values)),
        tags={TICKET_TAG: KEY},
        raise_on_error=False,
    )
    assert not twin.success and asked[-1] == twin.run_id


def test_the_cleared_runs_memory_keeps_only_the_newest():
    bound = _shell.CLEARED_RUNS_REMEMBERED
    ids = [f"run-{i}" for i in range(bound + 3)]
    for run_id in ids:
        _shell._remember_cleared(run_id)
    assert list(_shell._cleared_runs) == ids[-bound:]
