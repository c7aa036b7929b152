"""A test Dagster instance for sensor tests, and the daemon's part played by hand.

Shared by the shared sensors' tests (``tests/sensors/``) and each ticket source's intake sensor
tests (``tests/sources/<name>/``): their conftests import the fixtures from here. ``launch``
applies a tick's partition requests and creates one run per run request in the instance, less
the requests whose ``run_key`` a run already has (the daemon's own check), so the next tick's
dedup sees exactly what production would see; counting runs per ticket tag is the "no duplicate
run" assertion.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import dagster as dg
import pytest
from dagster._core.storage.tags import RUN_KEY_TAG

from veranda_dagster.partitions import TICKET_JOB, TICKET_TAG


@pytest.fixture(scope="module")
def _shared_instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as inst:
        yield inst


@pytest.fixture
def instance(_shared_instance: dg.DagsterInstance) -> dg.DagsterInstance:
    """A wiped test instance per test: one sqlite instance per module costs a tenth as much."""
    _shared_instance.wipe()
    return _shared_instance


@dg.op
def _noop() -> None:
    return None


@dg.job(name=TICKET_JOB)
def ticket_job() -> None:
    _noop()


def launch(instance: dg.DagsterInstance, result: dg.SensorResult) -> None:
    """What the daemon does with a SensorResult: add partitions, create the runs, skipping a
    request whose ``run_key`` a run already carries, in any status (``fetch_existing_runs`` in
    Dagster 1.13.27; these tests' runs all belong to one sensor)."""
    for request in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
    for run_request in result.run_requests or []:
        key = run_request.run_key
        if key and instance.get_runs(filters=dg.RunsFilter(tags={RUN_KEY_TAG: key}), limit=1):
            continue
        tags = {**run_request.tags, **({RUN_KEY_TAG: key} if key else {})}
        instance.create_run_for_job(ticket_job, tags=tags, status=dg.DagsterRunStatus.NOT_STARTED)


def runs_per_ticket(instance: dg.DagsterInstance) -> Counter[str]:
    return Counter(run.tags[TICKET_TAG] for run in instance.get_runs())


def keys_of(result: dg.SensorResult) -> list[str]:
    return [str(r.partition_key) for r in result.run_requests or []]
