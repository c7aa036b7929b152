"""The receiver asks the code location for ``ticket_run``'s plan once per job snapshot, and
keeps at most ``MAX_CACHED_PLANS`` of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dagster as dg
import pytest

from veranda_dagster.sources import push_launch
from veranda_dagster.sources.push_launch import PushLauncher


@dataclass
class _Job:
    identifying_job_snapshot_id: str


@dataclass
class _Plan:
    execution_plan_snapshot: str


class _Location:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def get_execution_plan(self, job: _Job, *_: Any, **__: Any) -> _Plan:
        self.asked.append(job.identifying_job_snapshot_id)
        return _Plan(f"plan-of-{job.identifying_job_snapshot_id}")


def test_one_ask_per_job_snapshot_and_the_cache_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(push_launch, "MAX_CACHED_PLANS", 2)
    with dg.instance_for_test() as instance:
        launcher = PushLauncher(instance, workspace=None)
        location = _Location()
        for snapshot in ["a", "a", "b", "a", "c", "a", "b"]:
            assert launcher._plan(location, _Job(snapshot)) == f"plan-of-{snapshot}"
    # a, b cached; c evicts a (the oldest); a again evicts b; b again is asked anew
    assert location.asked == ["a", "b", "c", "a", "b"]
    assert len(launcher._plans) == 2
