"""Helpers for tests that drive a running ``dagster dev`` the way the UI does: its GraphQL API
for actions, the instance's event log for what happened."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

import dagster as dg
from dagster._core.scheduler.instigation import InstigatorType, TickStatus

from veranda_dagster.assets._policy import PHASES
from veranda_dagster.sim.dagster_dev import DagsterDev

T = TypeVar("T")

REEXECUTE = """
mutation($parent: String!) {
  launchRunReexecution(reexecutionParams: {parentRunId: $parent, strategy: FROM_FAILURE}) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}"""
BACKFILL = """
mutation($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
    ... on PartitionKeysNotFoundError { message }
  }
}"""
BACKFILL_STATUS = """
query($id: String!) {
  partitionBackfillOrError(backfillId: $id) {
    __typename ... on PartitionBackfill { id status }
  }
}"""
MODEL_PHASES = frozenset(name for name, spec in PHASES.items() if spec.model)
STARTS = {"STEP_START", "STEP_RESTARTED"}
ENDS = {"STEP_SUCCESS", "STEP_FAILURE", "STEP_UP_FOR_RETRY"}


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, poll: float = 2) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def reexecute_from_failure(dev: DagsterDev, run_id: str) -> str:
    result = dev.graphql(REEXECUTE, {"parent": run_id})["launchRunReexecution"]
    assert result["__typename"] == "LaunchRunSuccess", result
    return str(result["run"]["runId"])


def backfill_assets(dev: DagsterDev, assets: Iterable[str], partitions: list[str]) -> str:
    params = {
        "assetSelection": [{"path": [name]} for name in assets],
        "partitionNames": partitions,
        "title": "rerun patch and downstream",
    }
    result = dev.graphql(BACKFILL, {"params": params})["launchPartitionBackfill"]
    assert result["__typename"] == "LaunchBackfillSuccess", result
    return str(result["backfillId"])


def backfill_status(dev: DagsterDev, backfill_id: str) -> str:
    data = dev.graphql(BACKFILL_STATUS, {"id": backfill_id})["partitionBackfillOrError"]
    return str(data.get("status") or data["__typename"])


def finished_runs(instance: dg.DagsterInstance, tags: dict[str, str]) -> list[dg.DagsterRun]:
    return [r for r in instance.get_runs(filters=dg.RunsFilter(tags=tags)) if r.is_finished]


def step_events(instance: dg.DagsterInstance, run_id: str) -> list[tuple[str, str, float]]:
    """(step key, event type, timestamp) of every step event of the run."""
    return [
        (e.step_key, e.dagster_event.event_type_value, e.timestamp)
        for e in instance.all_logs(run_id)
        if e.dagster_event is not None and e.step_key
    ]


def steps_with(instance: dg.DagsterInstance, run_id: str, event_type: str) -> set[str]:
    return {step for step, kind, _ in step_events(instance, run_id) if kind == event_type}


def max_concurrent_model_steps(instance: dg.DagsterInstance, run_ids: Iterable[str]) -> int:
    """The most model-phase steps executing at one instant, over all ``run_ids``."""
    edges: list[tuple[float, int]] = []
    for run_id in run_ids:
        for step, kind, at in step_events(instance, run_id):
            if step in MODEL_PHASES and kind in STARTS:
                edges.append((at, 1))
            elif step in MODEL_PHASES and kind in ENDS:
                edges.append((at, -1))
    most = current = 0
    for _, delta in sorted(edges, key=lambda e: (e[0], e[1])):  # an end before a start
        current += delta
        most = max(most, current)
    return most


def sensor_ticked_after(instance: dg.DagsterInstance, sensor: str, since: float) -> bool:
    """Whether a tick of ``sensor`` that started after ``since`` has finished without error
    (so it has read every run event written before ``since``)."""
    done = (TickStatus.SUCCESS, TickStatus.SKIPPED)
    for state in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR):
        if state.instigator_name != sensor:
            continue
        ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, after=since)
        if any(t.status in done and t.timestamp > since for t in ticks):
            return True
    return False


def failure_notes(comments: list[str]) -> list[str]:
    return [c for c in comments if "failed at" in c and "To rerun" in c]


def run_overlap(runs: list[dg.DagsterRun], instance: dg.DagsterInstance) -> bool:
    """Whether at least two of ``runs`` were in progress at the same time."""
    spans: list[tuple[float, float]] = []
    for run in runs:
        record = instance.get_run_record_by_id(run.run_id)
        if record and record.start_time and record.end_time:
            spans.append((record.start_time, record.end_time))
    spans.sort()
    return any(b[0] < a[1] for a, b in itertools.pairwise(spans))
