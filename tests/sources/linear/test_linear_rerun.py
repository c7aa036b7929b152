"""A ticket whose runs failed before ``ticket`` materialized gets a new run the daemon really
creates, at most ``MAX_TICKET_RUNS`` in all.

The daemon refuses a sensor's run request whose ``run_key`` one of that sensor's runs already
carries, in any status (``fetch_existing_runs``, Dagster 1.13.27). With every run keyed by the
ticket alone, the dedup gate's "failed before ``ticket``: may run again" was a request the daemon
silently dropped. Here the tick is the real ``linear_tickets`` over the HTTP-level fake and the
check is the daemon's own, against the product's code location.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
import pytest
from dagster._core.storage.tags import RUN_KEY_TAG, SENSOR_NAME_TAG
from dagster._daemon.sensor import fetch_existing_runs

from tests.sources.linear.test_linear_sensor import pages, tick
from tests.support.sensor_instance import keys_of, ticket_job
from veranda_dagster.partitions import TICKET_TAG, TICKET_TAKEN_TAG, TICKETS_NAME
from veranda_dagster.sources.dedup import MAX_TICKET_RUNS, ticket_run_key, ticket_run_request

SENSOR = "linear_tickets"


def failed_runs(instance: dg.DagsterInstance, key: str, count: int, **tags: str) -> None:
    """``count`` failed runs of ``key`` as the daemon created them: the sensor's tags, the
    ticket's successive run keys."""
    instance.add_dynamic_partitions(TICKETS_NAME, [key])
    for earlier in range(count):
        instance.create_run_for_job(
            ticket_job,
            status=dg.DagsterRunStatus.FAILURE,
            tags={
                TICKET_TAG: key,
                RUN_KEY_TAG: ticket_run_key(key, earlier),
                SENSOR_NAME_TAG: SENSOR,
                **tags,
            },
        )


@pytest.fixture
def daemon_check(workspace_instance: Any) -> tuple[dg.DagsterInstance, Any]:
    """The wiped instance and the real ``linear_tickets`` as the daemon loads it."""
    instance, workspace = workspace_instance
    instance.wipe()
    context = workspace.create_request_context()
    [entry] = context.get_code_location_entries().values()
    [repository] = entry.code_location.get_repositories().values()
    return instance, repository.get_sensor(SENSOR)


def test_a_ticket_that_failed_before_ticket_gets_a_run_the_daemon_creates(
    daemon_check: tuple[dg.DagsterInstance, Any],
) -> None:
    instance, sensor = daemon_check
    failed_runs(instance, "ENG-1", 1)  # died before its first phase: holds nothing
    failed_runs(instance, "ENG-3", 1, **{TICKET_TAKEN_TAG: "1"})  # died later: re-executed
    result = tick(instance, pages("poll_page1", "poll_page2"))
    assert keys_of(result) == ["ENG-1", "ENG-2"]
    first, fresh = result.run_requests
    assert (first.run_key, fresh.run_key) == ("ENG-1:run-2", "ENG-2")
    assert fetch_existing_runs(instance, sensor, result.run_requests) == {}
    # the twin: keyed by the ticket alone, the daemon drops the re-run as a duplicate
    assert set(fetch_existing_runs(instance, sensor, [ticket_run_request("ENG-1")])) == {"ENG-1"}


def test_a_ticket_stops_getting_runs_at_the_bound(
    daemon_check: tuple[dg.DagsterInstance, Any], capfd: pytest.CaptureFixture[str]
) -> None:
    instance, sensor = daemon_check
    failed_runs(instance, "ENG-1", MAX_TICKET_RUNS - 1)
    failed_runs(instance, "ENG-2", MAX_TICKET_RUNS)
    result = tick(instance, pages("poll_page1", "poll_page2"))
    assert keys_of(result) == ["ENG-1", "ENG-3"]
    assert result.run_requests[0].run_key == f"ENG-1:run-{MAX_TICKET_RUNS}"
    assert fetch_existing_runs(instance, sensor, result.run_requests) == {}
    # the sensor's log (Dagster's handler writes to stderr) says why ENG-2 got none
    said = capfd.readouterr().err
    assert f"ENG-2: its {MAX_TICKET_RUNS} runs all failed before `ticket`" in said
