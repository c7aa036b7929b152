"""The real phase assets (spine) with the spine's scripted domain, run in process:
what the asset shell writes is what ``observe_phase``, the tail and ``veranda report`` read.

This pins the metadata contract between ``assets/_shell.py`` and ``ops/`` end to end, so a
renamed key on either side fails here rather than in a dashboard.
"""

from __future__ import annotations

import dagster as dg
import pytest

from tests.assets.fakes import fake_definitions
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.observability import metrics as m
from veranda_dagster.observability.materializations import MaterializationTail, read_phase_records
from veranda_dagster.observability.report import report_from_instance
from veranda_dagster.partitions import TICKET_JOB, TICKETS

TICKET = "ENG-77"


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    base = tmp_path_factory.mktemp("real_graph")
    defs = fake_definitions(str(base / "counter"), str(base / "values"))
    (base / "counter").mkdir()
    (base / "home").mkdir()
    fresh = m.PhaseMetrics()
    previous = m.use_metrics(fresh)
    try:
        with dg.instance_for_test(temp_dir=str(base / "home")) as instance:
            instance.add_dynamic_partitions(TICKETS.name, [TICKET])
            result = defs.resolve_job_def(TICKET_JOB).execute_in_process(
                instance=instance, partition_key=TICKET
            )
            assert result.success
            yield instance, fresh
    finally:
        m.use_metrics(previous)


def test_in_process_run_feeds_every_phase_metric(ran) -> None:
    instance, metrics = ran
    phases = {r.phase for r in read_phase_records(instance)}
    reg = metrics.registry
    for phase in phases:
        assert reg.get_sample_value("veranda_phase_duration_seconds_count", {"phase": phase}) == 1
    assert {"ticket", "patch", "ci_outcome"} <= phases
    assert reg.get_sample_value("veranda_task_usd_count") == 1
    assert reg.get_sample_value("veranda_ci_results_total", {"status": "success"}) == 1
    assert reg.get_sample_value(
        "veranda_backend_resolutions_total",
        {"family": "claude", "mode": "api_key", "reason": "preferred"},
    )


def test_report_and_tail_agree_with_the_stored_metadata(ran) -> None:
    instance, metrics = ran
    records = read_phase_records(instance)
    report = report_from_instance(instance, since=None)
    assert report["total"]["usd"] == pytest.approx(sum(r.num("usd") for r in records))
    assert report["total"]["tokens_in"] == sum(int(r.num("tokens_in")) for r in records)
    assert list(report["tickets"]) == [TICKET]
    # the run's USD as the metrics saw it in process equals the stored metadata's sum
    assert metrics.registry.get_sample_value("veranda_task_usd_sum") == pytest.approx(
        report["total"]["usd"]
    )
    replay = m.PhaseMetrics()
    assert MaterializationTail(instance, replay).poll(limit=100) == len(records)
    assert replay.registry.get_sample_value("veranda_task_usd_sum") == pytest.approx(
        report["total"]["usd"]
    )


def test_past_the_report_bound_the_read_is_an_error_not_a_short_total(ran) -> None:
    """``MAX_REPORT_EVENTS`` (the ``limit``; here the run's own count less one) makes a window
    with more materializations an error that names the fix, never a silently short total; its
    twin, the limit at the count, reads every one."""
    instance, _ = ran
    count = len(read_phase_records(instance))
    with pytest.raises(InputError, match=f"more than {count - 1} phase materializations"):
        read_phase_records(instance, limit=count - 1)
    assert len(read_phase_records(instance, limit=count)) == count
