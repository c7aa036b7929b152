"""The dedup guard asks the instance: held runs and materialized partitions, nothing in memory."""

from __future__ import annotations

import dagster as dg
import pytest

from tests.sensors.test_linear_sensor import ticket_job
from veranda_dagster.partitions import TICKET_TAG, TICKETS
from veranda_dagster.sensors.dedup import (
    HELD_STATUSES,
    new_tickets,
    sensor_result,
    ticket_run_request,
    tickets_with_runs,
)


@pytest.fixture(scope="module")
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def _run(instance, key: str, status: dg.DagsterRunStatus) -> None:
    instance.create_run_for_job(ticket_job, tags={TICKET_TAG: key}, status=status)


def test_held_statuses_take_a_ticket_and_failed_ones_do_not(instance):
    for i, status in enumerate(HELD_STATUSES):
        if status is not dg.DagsterRunStatus.QUEUED:  # queued runs need a remote origin
            _run(instance, f"HOLD-{i}", status)
    _run(instance, "FAIL-1", dg.DagsterRunStatus.FAILURE)
    _run(instance, "CANC-1", dg.DagsterRunStatus.CANCELED)
    keys = [f"HOLD-{i}" for i in range(1, len(HELD_STATUSES))] + ["FAIL-1", "CANC-1", "NEW-1"]
    assert tickets_with_runs(instance, keys) == set(keys[:-3])
    assert new_tickets(instance, keys) == ["FAIL-1", "CANC-1", "NEW-1"]


def test_a_materialized_partition_takes_the_ticket_even_without_a_run(instance):
    instance.add_dynamic_partitions(TICKETS.name, ["MAT-1", "EMPTY-1"])
    instance.report_runless_asset_event(dg.AssetMaterialization("ticket", partition="MAT-1"))
    assert new_tickets(instance, ["MAT-1", "EMPTY-1"]) == ["EMPTY-1"]


def test_a_failed_run_whose_partition_materialized_still_holds(instance):
    _run(instance, "FAIL-2", dg.DagsterRunStatus.FAILURE)
    instance.add_dynamic_partitions(TICKETS.name, ["FAIL-2"])
    instance.report_runless_asset_event(dg.AssetMaterialization("ticket", partition="FAIL-2"))
    assert new_tickets(instance, ["FAIL-2"]) == []


def test_keys_seen_twice_in_one_tick_are_requested_once(instance):
    assert new_tickets(instance, ["TWICE-1", "TWICE-2", "TWICE-1"]) == ["TWICE-1", "TWICE-2"]
    assert tickets_with_runs(instance, []) == set()


def test_run_request_and_result_shape():
    request = ticket_run_request("ENG-7")
    assert request.partition_key == "ENG-7" and request.run_key == "ENG-7"
    assert request.tags == {TICKET_TAG: "ENG-7", "veranda/ticket-run": "1"}
    empty = sensor_result([], "{}")
    assert empty.run_requests == [] and empty.dynamic_partitions_requests == []
    assert empty.cursor == "{}"


class CountingInstance:
    """The instance with every method call counted: what one dedup tick asks of storage."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        self._instance = instance
        self.calls: list[str] = []

    def __getattr__(self, name: str):
        attr = getattr(self._instance, name)
        if not callable(attr):
            return attr

        def counted(*args, **kwargs):
            self.calls.append(name)
            return attr(*args, **kwargs)

        return counted


def test_a_dedup_tick_asks_the_instance_once_per_kind_whatever_the_number_of_tickets(instance):
    keys = [f"BATCH-{i}" for i in range(50)]
    for key in keys[:10]:
        _run(instance, key, dg.DagsterRunStatus.SUCCESS)
    instance.add_dynamic_partitions(TICKETS.name, keys[10:20])
    for key in keys[10:20]:
        instance.report_runless_asset_event(dg.AssetMaterialization("ticket", partition=key))
    for key in ["OTHER-1", "OTHER-2"]:  # materialized tickets the tick never asks about
        instance.report_runless_asset_event(dg.AssetMaterialization("ticket", partition=key))
    counting = CountingInstance(instance)
    assert new_tickets(counting, keys) == keys[20:]  # type: ignore[arg-type]
    # one runs query and one materialization query for the 50 tickets; no per-ticket
    # partition lookups and no read of every materialized partition
    assert counting.calls == ["get_runs", "get_latest_storage_id_by_partition"]
    one = CountingInstance(instance)
    new_tickets(one, ["BATCH-49"])  # type: ignore[arg-type]
    assert len(one.calls) == len(counting.calls)
