"""The product as a person uses it in the Dagster UI, against a real daemon.

``dagster dev`` (webserver, daemon, code server) runs on a temporary SQLite home with the
simulated world behind it, configured exactly as ``veranda dev`` configures it, with the model
pool cut to one slot. Three tickets are filed; the real ``linear_tickets`` sensor, ticked by
the daemon, launches a ticket run for each, and each fails at ``patch`` (the implementer's
model calls answer 500 past the CLI's retry and the phase's own). Then, through the GraphQL
API the UI uses:

(a) the first ticket's run is re-executed from failure;
(b) ``patch`` and everything downstream is backfilled over the other two tickets.

Asserted: upstream phases were loaded, not recomputed, and no model call before ``patch`` was
repeated; one PR per ticket; never more model steps at once than the pool's one slot, though
runs overlapped; backfill runs carry their ticket's tag; and each failed run told its ticket
exactly once.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.conftest import step_failures
from tests.e2e.dagster_ui import (
    backfill_assets,
    backfill_status,
    failure_notes,
    finished_runs,
    max_concurrent_model_steps,
    reexecute_from_failure,
    run_overlap,
    sensor_ticked_after,
    steps_with,
    wait_for,
)
from veranda_dagster.cli.dev import dev_env
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.sim.dagster_dev import DagsterDev, free_port
from veranda_dagster.sim.driver import instance_for, kill_agents_in
from veranda_dagster.sim.sample_org import SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.world import LINEAR_LABEL, SimWorld

pytestmark = pytest.mark.dagster_ui

TICKETS = 3
FAILS_PER_PATCH = 4
"""Two attempts of ``patch`` (its RetryPolicy), each two 500s (one try plus the CLI's retry)."""
UPSTREAM = ("ticket", "repo_guess", "context_pack", "red_tests")
RERUN = ("patch", "pull_request", "review_rounds", "ci_outcome", "feedback")
RUNS_TIMEOUT_S = 900.0


def test_sensor_runs_fail_at_patch_then_reexecution_and_backfill_keep_every_bound(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    world = SimWorld(root=tmp_path / "world", pool_limit=1)
    with world:
        port = free_port()
        env = dev_env(world.env, f"http://127.0.0.1:{port}")
        env["VERANDA_MODEL_RETRY_DELAY_S"] = "0"
        world.env.update(env)
        world.apply_env()
        keys = [
            world.linear.file_ticket(
                f"{SAMPLE_TICKET_TITLE} ({n})", SAMPLE_TICKET_BODY, labels=[LINEAR_LABEL]
            )["identifier"]
            for n in range(TICKETS)
        ]
        world.model.fail_role("implementer", 500, times=FAILS_PER_PATCH * TICKETS)
        dev = DagsterDev(world.dagster_home, env, port=port)
        try:
            dev.start()
            with instance_for(str(world.dagster_home)) as instance:
                check_the_whole_story(world, dev, instance, keys)
        finally:
            dev.stop()
            kill_agents_in(world.dagster_home / "workspaces")
    print(f"e2e dagster-ui reruns: {time.monotonic() - started:.0f} s")


def check_the_whole_story(world: SimWorld, dev: DagsterDev, instance, keys: list[str]) -> None:
    # the daemon ticks the sensor; it launches one ticket run per ticket; each fails at patch
    sensor_tags = {"dagster/sensor_name": "linear_tickets"}
    first = wait_for(
        "the sensor's three runs to finish",
        lambda: runs if len(runs := finished_runs(instance, sensor_tags)) == TICKETS else None,
        RUNS_TIMEOUT_S,
    )
    by_key = {run.tags[TICKET_TAG]: run for run in first}
    assert set(by_key) == set(keys)
    for run in first:
        assert run.status.value == "FAILURE", run.run_id
        assert steps_with(instance, run.run_id, "STEP_FAILURE") == {"patch"}, run.run_id
        assert set(UPSTREAM) <= steps_with(instance, run.run_id, "STEP_SUCCESS")
    assert run_overlap(first, instance)  # the runs ran side by side; the pool had work to do

    # each failed run told its ticket, once, on the ticket's own channel
    def notes() -> dict[str, list[str]]:
        return {k: failure_notes(world.linear.bot_comments(k)) for k in keys}

    wait_for("a failure note on every ticket", lambda: all(notes().values()), 120)
    for key, found in notes().items():
        assert len(found) == 1, (key, found)
        assert "phase `patch`" in found[0] and "Stored phases are kept" in found[0]
        assert not any(secret in found[0] for secret in world.secrets)
    calls_before = world.model.calls_by_role()

    # (a) re-execute the first ticket's run from failure, as the UI's button does
    a_key, *backfilled = keys
    rerun_id = reexecute_from_failure(dev, by_key[a_key].run_id)
    # (b) backfill patch and its downstream over the two other tickets
    backfill_id = backfill_assets(dev, RERUN, backfilled)

    rerun = wait_for(
        "the re-execution to finish",
        lambda: r if (r := instance.get_run_by_id(rerun_id)) and r.is_finished else None,
        RUNS_TIMEOUT_S,
    )
    assert rerun.status.value == "SUCCESS", rerun_id
    wait_for(
        "the backfill to complete",
        lambda: backfill_status(dev, backfill_id) in ("COMPLETED_SUCCESS", "COMPLETED_FAILED"),
        RUNS_TIMEOUT_S,
        poll=5,
    )
    backfill_runs = finished_runs(instance, {"dagster/backfill": backfill_id})
    assert backfill_status(dev, backfill_id) == "COMPLETED_SUCCESS", {
        r.run_id: step_failures(instance, r.run_id) for r in backfill_runs
    }
    assert sorted(r.tags["dagster/partition"] for r in backfill_runs) == sorted(backfilled)
    for run in backfill_runs:
        assert run.status.value == "SUCCESS", run.run_id
        assert run.tags[TICKET_TAG] == run.tags["dagster/partition"]  # filters find it
        assert "veranda/ticket-run" not in run.tags  # the implicit asset job, not ticket_run

    # upstream values were loaded, not recomputed
    for run in [rerun, *backfill_runs]:
        executed = steps_with(instance, run.run_id, "STEP_START")
        assert not executed & set(UPSTREAM), (run.run_id, executed)
        assert set(RERUN) <= steps_with(instance, run.run_id, "STEP_SUCCESS"), run.run_id
        loaded = steps_with(instance, run.run_id, "LOADED_INPUT")
        assert "patch" in loaded

    # no model call made before patch was repeated
    calls_after = world.model.calls_by_role()
    for role, count in calls_before.items():
        if role not in ("implementer", "probe"):  # probes: each run worker's health check
            assert calls_after[role] == count, (role, count, calls_after)
    assert calls_after["implementer"] > calls_before["implementer"]

    # one PR per ticket
    heads = [pr["head"]["ref"] for pulls in world.github.pulls.values() for pr in pulls.values()]
    assert len(heads) == TICKETS and len(set(heads)) == TICKETS, heads

    # the pool's one slot held across the sensor's runs, the re-execution and the backfill
    ids = [r.run_id for r in [*first, rerun, *backfill_runs]]
    assert max_concurrent_model_steps(instance, ids) == 1

    # successful reruns post no failure note; each failed run's note is still there once, after
    # a run-failure sensor tick that started once every run had ended (was: a 20 s sleep)
    ended = max(r.end_time for r in map(instance.get_run_record_by_id, ids) if r and r.end_time)
    wait_for(
        "a run-failure sensor tick after the last run ended",
        lambda: sensor_ticked_after(instance, "ticket_run_failures", ended),
        120,
        poll=1,
    )
    assert {k: len(v) for k, v in notes().items()} == {k: 1 for k in keys}
