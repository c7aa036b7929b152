"""E2E fixtures: a whole simulated world per test, with the product configured against it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest

from veranda_dagster.sim.driver import SensorDriver, instance_for, run_tags, run_ticket_process
from veranda_dagster.sim.world import SimWorld


@pytest.fixture()
def world(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[SimWorld]:
    options = getattr(request, "param", {}) or {}
    sim = SimWorld(root=tmp_path / "world", **options)
    with sim:
        sim.apply_env()
        yield sim


@pytest.fixture()
def instance(world: SimWorld) -> Iterator[dg.DagsterInstance]:
    with instance_for(str(world.dagster_home)) as inst:
        yield inst


def step_successes(instance: dg.DagsterInstance, run_id: str) -> set[str]:
    return {
        e.step_key
        for e in instance.all_logs(run_id)
        if e.dagster_event is not None and e.dagster_event.is_step_success and e.step_key
    }


def step_failures(instance: dg.DagsterInstance, run_id: str) -> dict[str, str]:
    out = {}
    for e in instance.all_logs(run_id):
        if e.dagster_event is not None and e.dagster_event.is_step_failure and e.step_key:
            error = e.dagster_event.step_failure_data.error
            out[e.step_key] = error.message if error else ""
    return out


@contextmanager
def linear_ticket_run(
    world: SimWorld, title: str, body: str
) -> Iterator[tuple[str, dg.DagsterInstance, str, bool]]:
    """Configure the product against ``world``, file ``title``/``body`` on Linear, let
    ``linear_tickets`` take it and run its ticket in a fresh process, as the daemon would:
    (the key, the instance, the run id, whether the run succeeded), the instance open while
    the block reads it."""
    world.apply_env()
    key = world.linear.file_ticket(title, body)["identifier"]
    with instance_for(str(world.dagster_home)) as instance:
        (run,) = SensorDriver().tick(instance, "linear_tickets")
        run_id, ok = run_ticket_process(run_tags(run), world.env)
        yield key, instance, run_id, ok
