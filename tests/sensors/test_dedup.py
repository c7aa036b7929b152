"""The dedup guard asks the instance, in one runs query a tick: held runs and runs marked as
having materialized ``ticket``, nothing in memory."""

from __future__ import annotations

import dagster as dg
import pytest

from tests.support.sensor_instance import ticket_job
from veranda_dagster.assets.ticket import ticket as ticket_asset
from veranda_dagster.partitions import TICKET_TAG, TICKET_TAKEN_TAG, TICKETS
from veranda_dagster.sources.dedup import (
    HELD_STATUSES,
    held_tickets,
    mark_taken,
    new_tickets,
    sensor_result,
    ticket_holds,
    ticket_run_request,
)


@pytest.fixture(scope="module")
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def _run(instance, key: str, status: dg.DagsterRunStatus, **tags: str) -> None:
    instance.create_run_for_job(ticket_job, tags={TICKET_TAG: key, **tags}, status=status)


@dg.asset(name="ticket", partitions_def=TICKETS, hooks={mark_taken})
def _ticket() -> int:
    return 1


@dg.asset(partitions_def=TICKETS, deps=[_ticket])
def _fails_after_ticket() -> None:
    raise RuntimeError("a later phase failed")


@dg.asset(name="ticket", partitions_def=TICKETS, hooks={mark_taken})
def _ticket_fails() -> None:
    raise RuntimeError("ticket itself failed")


def _execute(instance, key: str, assets: list) -> None:
    """A real run of ``assets`` for ``key``, tagged as the sensor tags it; it fails on purpose."""
    instance.add_dynamic_partitions(TICKETS.name, [key])
    result = dg.materialize(
        assets, partition_key=key, instance=instance, tags={TICKET_TAG: key}, raise_on_error=False
    )
    assert not result.success


def test_held_statuses_take_a_ticket_and_failed_ones_do_not(instance):
    for i, status in enumerate(HELD_STATUSES):
        if status is not dg.DagsterRunStatus.QUEUED:  # queued runs need a remote origin
            _run(instance, f"HOLD-{i}", status)
    _run(instance, "FAIL-1", dg.DagsterRunStatus.FAILURE)
    _run(instance, "CANC-1", dg.DagsterRunStatus.CANCELED)
    held = [f"HOLD-{i}" for i, s in enumerate(HELD_STATUSES) if s is not dg.DagsterRunStatus.QUEUED]
    keys = [*held, "FAIL-1", "CANC-1", "NEW-1"]
    assert held_tickets(instance, keys) == set(held)
    assert new_tickets(instance, keys) == ["FAIL-1", "CANC-1", "NEW-1"]
    # the switch: any run at all, a failed or canceled one included, but not a new key
    assert held_tickets(instance, keys, any_run=True) == {*held, "FAIL-1", "CANC-1"}


def test_the_real_ticket_asset_marks_its_run_when_it_materializes():
    assert mark_taken in ticket_asset.hook_defs


def test_a_run_that_materialized_ticket_and_then_failed_still_holds(instance):
    _execute(instance, "LATE-1", [_ticket, _fails_after_ticket])
    (run,) = instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: "LATE-1"}))
    assert run.status is dg.DagsterRunStatus.FAILURE and run.tags[TICKET_TAKEN_TAG] == "1"
    assert new_tickets(instance, ["LATE-1"]) == []


def test_a_run_that_failed_in_ticket_holds_nothing_and_the_ticket_can_run_again(instance):
    _execute(instance, "EARLY-1", [_ticket_fails])
    (run,) = instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: "EARLY-1"}))
    assert TICKET_TAKEN_TAG not in run.tags
    assert new_tickets(instance, ["EARLY-1"]) == ["EARLY-1"]
    assert held_tickets(instance, ["EARLY-1"], any_run=True) == {"EARLY-1"}


def test_an_unmarked_failed_run_whose_partition_materialized_still_holds(instance):
    """Runs written before the mark existed: the event log answers for just those keys."""
    _run(instance, "FAIL-2", dg.DagsterRunStatus.FAILURE)
    instance.add_dynamic_partitions(TICKETS.name, ["FAIL-2"])
    instance.report_runless_asset_event(dg.AssetMaterialization("ticket", partition="FAIL-2"))
    assert new_tickets(instance, ["FAIL-2"]) == []


def test_holds_survive_a_restart_because_they_live_in_the_instance(tmp_path):
    with dg.instance_for_test(temp_dir=str(tmp_path)) as first:
        _execute(first, "LATE-2", [_ticket, _fails_after_ticket])
        _run(first, "DONE-2", dg.DagsterRunStatus.SUCCESS)
    with dg.instance_for_test(temp_dir=str(tmp_path)) as second:  # a new process, same storage
        assert new_tickets(second, ["LATE-2", "DONE-2", "NEW-2"]) == ["NEW-2"]


def test_in_flight_is_a_run_still_going(instance):
    _run(instance, "FLY-1", dg.DagsterRunStatus.STARTED)
    _run(instance, "FLY-2", dg.DagsterRunStatus.SUCCESS)
    holds = ticket_holds(instance, ["FLY-1", "FLY-2", "FLY-3"])
    assert holds.in_flight == {"FLY-1"} and holds.taken == {"FLY-1", "FLY-2"}


def test_keys_seen_twice_in_one_tick_are_requested_once(instance):
    assert new_tickets(instance, ["TWICE-1", "TWICE-2", "TWICE-1"]) == ["TWICE-1", "TWICE-2"]
    assert held_tickets(instance, []) == set()


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


def test_a_dedup_tick_asks_the_instance_once_for_50_tickets(instance):
    keys = [f"BATCH-{i}" for i in range(50)]
    for key in keys[:10]:
        _run(instance, key, dg.DagsterRunStatus.SUCCESS)
    for key in keys[10:20]:  # materialized ticket, then failed: the mark says so
        _run(instance, key, dg.DagsterRunStatus.FAILURE, **{TICKET_TAKEN_TAG: "1"})
    for key in ["OTHER-1", "OTHER-2"]:  # runs of tickets the tick never asks about
        _run(instance, key, dg.DagsterRunStatus.SUCCESS)
    counting = CountingInstance(instance)
    assert new_tickets(counting, keys) == keys[20:]  # type: ignore[arg-type]
    # one runs query for the 50 tickets: no per-ticket lookups, no materialization query,
    # no read of every partition
    assert counting.calls == ["get_runs"]
    one = CountingInstance(instance)
    new_tickets(one, ["BATCH-49"])  # type: ignore[arg-type]
    assert one.calls == counting.calls


def test_asking_for_any_run_adds_one_batched_partitions_query_not_one_per_ticket(instance):
    keys = [f"KNOWN-{i}" for i in range(50)]
    instance.add_dynamic_partitions(TICKETS.name, keys[:25])  # registered, run not created yet
    for key in keys[25:30]:
        _run(instance, key, dg.DagsterRunStatus.FAILURE, **{TICKET_TAKEN_TAG: "1"})
    counting = CountingInstance(instance)
    assert held_tickets(counting, keys, any_run=True) == set(keys[:30])  # type: ignore[arg-type]
    assert counting.calls == ["get_runs", "get_existing_dynamic_partitions"]
