"""The stand-in answers only the tickets it has an honest answer for.

A newcomer files the README's own example ("Fix the retry bug") with ``veranda sim ticket``;
the scripted model used to answer it with the sample's invoice fix, in a green PR. Now its work
seats refuse that ticket (HTTP 400), so the run fails at ``red_tests`` with one headline saying
what the stand-in is, the ticket's note says the same, ``veranda sim notes`` prints it, and no
pull request is opened. A ticket that names the sample's bug in other words still gets the fix,
asserted on its PR's diff.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from tests.e2e.conftest import step_failures
from veranda_dagster.cli import main
from veranda_dagster.definitions import build_definitions
from veranda_dagster.sim.control import SimControl
from veranda_dagster.sim.driver import SensorDriver, instance_for, run_tags, run_ticket_process
from veranda_dagster.sim.sample_org import BILLING, INVOICE_FIXED_LINE
from veranda_dagster.sim.scripted_agent import STAND_IN_REFUSAL
from veranda_dagster.sim.world import SimWorld

pytestmark = pytest.mark.slow

DAGSTER_FAILURE = "dagster._core.definitions.events.Failure: "
"""How Dagster prefixes a step's ``Failure`` in the event's error message."""

FOREIGN_TITLE = "Fix the retry bug"
FOREIGN_BODY = "repo: acme/billing\n\nThe client gives up after the first timeout."
SAMPLE_IN_OTHER_WORDS = "Invoices charge a line once, whatever its quantity"


@pytest.fixture
def dev(tmp_path: Path) -> Iterator[tuple[SimWorld, str]]:
    """A world kept up as ``veranda dev`` keeps it, with the state file ``veranda sim`` reads."""
    with SimWorld(root=tmp_path / "world") as world, SimControl(world, {"ui_url": "u"}) as ctl:
        world.apply_env()
        state = tmp_path / "dev.json"
        state.write_text(json.dumps({"control_url": ctl.base_url, "pid": os.getpid()}))
        yield world, str(state)


def file_with_sim(state: str, title: str, body: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["sim", "--state", state, "ticket", title, "--body", body]) == 0
    return capsys.readouterr().out.split()[1].rstrip(":")


def post_failure_note(instance: dg.DagsterInstance, run_id: str) -> None:
    """One evaluation of the real ``ticket_run_failures`` sensor for the failed run, with the
    resources the definitions give it (the daemon's tick, in process)."""
    defs = build_definitions()
    sensor = defs.resolve_sensor_def("ticket_run_failures")
    run = instance.get_run_by_id(run_id)
    assert run is not None
    (event,) = [
        e.dagster_event
        for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
        if e.dagster_event is not None
    ]
    resources = {k: (defs.resources or {})[k] for k in sensor.required_resource_keys}
    with dg.build_run_status_sensor_context(
        sensor_name="ticket_run_failures",
        dagster_event=event,
        dagster_instance=instance,
        dagster_run=run,
        resources=resources,
    ) as context:
        sensor(context.for_run_failure())  # type: ignore[operator]


def test_a_ticket_the_stand_in_does_not_know_fails_saying_so_and_opens_no_pr(
    dev: tuple[SimWorld, str], capsys: pytest.CaptureFixture[str]
) -> None:
    world, state = dev
    foreign = file_with_sim(state, FOREIGN_TITLE, FOREIGN_BODY, capsys)
    sample = file_with_sim(state, SAMPLE_IN_OTHER_WORDS, FOREIGN_BODY, capsys)
    with instance_for(str(world.dagster_home)) as instance:
        requests = {r.partition_key: r for r in SensorDriver().tick(instance, "linear_tickets")}
        assert set(requests) == {foreign, sample}

        run_id, ok = run_ticket_process(run_tags(requests[foreign]), world.env)
        assert not ok
        failures = step_failures(instance, run_id)
        assert list(failures) == ["red_tests"], failures
        headline = failures["red_tests"].splitlines()[0].removeprefix(DAGSTER_FAILURE)
        assert headline.startswith("red_tests: VendorError: turn_failed: API Error: 400 ")
        assert STAND_IN_REFUSAL in headline
        # refused once, not retried, not answered with the invoice fix
        assert world.model.calls_by_role()["test_writer"] == 1
        assert world.model.calls_by_role(ok_only=True)["test_writer"] == 0
        assert world.github.all_pulls() == []

        post_failure_note(instance, run_id)
        (note,) = world.linear.bot_comments(foreign)
        assert "phase `red_tests`" in note and STAND_IN_REFUSAL in note
        capsys.readouterr()
        assert main(["sim", "--state", state, "notes", foreign]) == 0
        assert STAND_IN_REFUSAL in capsys.readouterr().out

        run_id, ok = run_ticket_process(run_tags(requests[sample]), world.env)
        assert ok, step_failures(instance, run_id)
        (pull,) = world.github.all_pulls(BILLING)
        repo = world.github.repo(BILLING)
        assert repo is not None
        diff = repo.git("diff", f"{pull['base']['sha']}...{pull['head']['sha']}")
        assert f"+{INVOICE_FIXED_LINE}" in diff
