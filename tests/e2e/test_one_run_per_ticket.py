"""Two launches of one ticket at once, on the real graph: while the sensor's run waits in its
first model call, a manual launch and a backfill-style launch (no veranda tag) of the same
ticket each stop at their first step, naming the run in progress, and call no model."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import step_failures
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.sim.driver import (
    SensorDriver,
    kill_run_worker,
    run_tags,
    run_ticket_process,
    spawn_ticket_run,
)
from veranda_dagster.sim.sample_org import SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.world import SimWorld

pytestmark = pytest.mark.slow


def test_a_second_launch_of_a_running_ticket_stops_before_any_model_call(world: SimWorld, instance):
    key = world.linear.file_ticket(SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)["identifier"]
    (request,) = SensorDriver().tick(instance, "linear_tickets")
    arrived = world.model.block("repo_confirmer")
    worker = spawn_ticket_run(run_tags(request), world.env)
    try:
        assert arrived.wait(150), "the first run never reached its first model call"
        (first,) = instance.get_runs()
        before = world.model.calls_by_role()  # the first run's probes; its held call is open
        for tags in ({TICKET_TAG: key, "dagster/partition": key}, {"dagster/partition": key}):
            run_id, ok = run_ticket_process(tags, world.env, timeout=180)
            assert not ok
            failures = step_failures(instance, run_id)
            assert list(failures) == ["ticket"], failures
            assert "TicketRunInProgressError" in failures["ticket"]
            assert first.run_id in failures["ticket"]
        assert world.model.calls_by_role() == before  # not a probe, not a model call more
    finally:
        if worker.poll() is None:
            kill_run_worker(worker)
        world.model.release("repo_confirmer")
