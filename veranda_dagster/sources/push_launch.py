"""A verified webhook's ticket -> its one run, created at once through the sensors' own gate.

Why this mechanism (Dagster 1.13.27, read in its source): the daemon evaluates sensors at most
every ``MIN_INTERVAL_LOOP_TIME`` = 5 s (``dagster/_daemon/sensor.py``), so an inbox a sensor
drains would add ~2.5 s on average plus a tick's evaluation; a backfill would wait for the
backfill daemon's loop. Instead the receiver does, in its own process, exactly what the sensor
daemon does with a ``RunRequest`` (``_create_sensor_run``): it loads the code location through a
``WorkspaceProcessContext`` (the workspace file the daemon runs), asks it for the ``ticket_run``
job's execution plan and partition tags, registers the ``tickets`` partition, creates the run and
submits it (``instance.submit_run``): with the shipped ``QueuedRunCoordinator`` it is queued,
and the daemon's dequeue (every second, ``dagster.yaml``) launches it under the same run limits.

The gate is the sensors' (``dedup.ticket_holds``: one runs query on the instance, never process
memory): a ticket already held gets no run. Push only starts a ticket's **first** run: a key
the instance knows at all (a failed run, or a partition a sensor registered whose run the daemon
has not made yet) is left to the poll, which owns the rules for a second one (Jira's "changed
only by our own comment", Slack's mention of a ticket in flight). The run carries the sensor's
own tags for the key (``dagster/sensor_name`` of the source's intake sensor, when the code
location has it, and ``dagster/run_key`` = the key, as ``ticket_run_request`` sets), so when
the poll later sees
the same ticket, ``ticket_holds`` finds this run, and even a tick that raced it is refused by the
daemon's own run-key check (``fetch_existing_runs``) before it creates a twin. Launches from
one receiver are serialized by a lock (two deliveries of one event race no further); a twin
that got past both, from a second receiver, is still refused at its first phase
(``assets/_shell.py``'s twin guard).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import dagster as dg
from dagster._core.remote_representation.external_data import PartitionTagsSnap
from dagster._core.storage.tags import RUN_KEY_TAG, SENSOR_NAME_TAG
from dagster._core.workspace.context import BaseWorkspaceRequestContext

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.partitions import TICKET_JOB, TICKETS_NAME
from veranda_dagster.sources import registry
from veranda_dagster.sources.dedup import ticket_holds, ticket_run_request

MAX_CACHED_PLANS = 8
"""Execution plans kept, one per ``ticket_run`` snapshot (a redeploy makes a new one)."""

PUSH_TAG = "veranda/intake"
"""Set to ``push`` on a run the webhook receiver created (the poll's runs carry none)."""


@dataclass(frozen=True)
class Launch:
    """What the gate decided for one key."""

    key: str
    run_id: str | None
    """The run created, or ``None`` when the gate refused one."""
    reason: str = ""


class PushLauncher:
    """Creates and submits a ticket's run from outside the daemon, through the sensors' gate.

    ``workspace`` is an entered ``dg``-internal ``WorkspaceProcessContext`` (its owner closes
    it); the code location holding ``ticket_run`` is found in it by job name."""

    def __init__(self, instance: dg.DagsterInstance, workspace: Any) -> None:
        self._instance = instance
        self._workspace = workspace
        self._lock = threading.Lock()
        self._plans: OrderedDict[str, Any] = OrderedDict()

    def launch(self, source: str, key: str, mentions: tuple[str, ...] = ()) -> Launch:
        """One run for ``key`` unless the instance already holds it (or, for a mention, holds a
        ticket it names); see the module docstring."""
        with self._lock:
            holds = ticket_holds(self._instance, [key, *mentions], registered=True)
            if key in holds.taken:
                return Launch(key, None, f"{key} already has a run")
            if key in holds.known:
                return Launch(key, None, f"{key} has a run or partition already; left to the poll")
            named = [m for m in mentions if m != key and m in holds.known]
            if named:
                return Launch(key, None, f"{key} refers to {named[0]}, which has its own run")
            return Launch(key, self._create(source, key))

    def _create(self, source: str, key: str) -> str:
        context = self._workspace.create_request_context()
        location, repository, job = _ticket_job(context)
        request = ticket_run_request(key)
        partition = location.get_partition_tags_from_repo(
            repository.handle, TICKET_JOB, key, self._instance
        )
        if not isinstance(partition, PartitionTagsSnap):
            raise ConfigError(f"{TICKET_JOB}: partition tags for {key} failed: {partition}")
        sensor = registry.get(source).sensor.name
        tags: dict[str, str] = {
            **(job.run_tags or {}),
            **{k: str(v) for k, v in partition.tags.items()},
            **request.tags,
            RUN_KEY_TAG: key,
            PUSH_TAG: "push",
        }
        if repository.has_sensor(sensor):
            tags[SENSOR_NAME_TAG] = sensor
        self._instance.add_dynamic_partitions(TICKETS_NAME, [key])
        plan = self._plan(location, job)
        run = self._instance.create_run(
            job_name=TICKET_JOB,
            run_id=None,
            run_config={},
            resolved_op_selection=job.resolved_op_selection,
            step_keys_to_execute=None,
            status=dg.DagsterRunStatus.NOT_STARTED,
            op_selection=None,
            root_run_id=None,
            parent_run_id=None,
            tags=tags,
            job_snapshot=job.job_snapshot,
            execution_plan_snapshot=plan,
            parent_job_snapshot=job.parent_job_snapshot,
            remote_job_origin=job.get_remote_origin(),
            job_code_origin=job.get_python_origin(),
            asset_selection=None,
            asset_check_selection=None,
            asset_graph=repository.asset_graph,
        )
        self._instance.submit_run(run.run_id, context)
        return run.run_id

    def _plan(self, location: Any, job: Any) -> Any:
        """``ticket_run``'s execution plan snapshot, asked of the code location once per job
        snapshot: a ticket run has no run config and no step selection, and its partition is a
        tag, so every ticket's plan is the same (each ask is a round trip to the code server,
        which rebuilds the plan, on every ticket's critical path)."""
        snapshot_id = job.identifying_job_snapshot_id
        if snapshot_id not in self._plans:
            remote = location.get_execution_plan(
                job, {}, step_keys_to_execute=None, known_state=None, instance=self._instance
            )
            self._plans[snapshot_id] = remote.execution_plan_snapshot
            while len(self._plans) > MAX_CACHED_PLANS:
                self._plans.popitem(last=False)
        return self._plans[snapshot_id]


def _ticket_job(context: BaseWorkspaceRequestContext) -> tuple[Any, Any, Any]:
    """(code location, repository, remote ``ticket_run``) of the workspace, or a
    ``ConfigError`` naming what is missing (a location that failed to load included)."""
    for entry in context.get_code_location_entries().values():
        location = entry.code_location
        if location is None:
            error = entry.load_error.message if entry.load_error else "not loaded"
            raise ConfigError(f"code location {entry.origin.location_name}: {error}")
        for repository in location.get_repositories().values():
            if repository.has_job(TICKET_JOB):
                return location, repository, repository.get_full_job(TICKET_JOB)
    raise ConfigError(f"no code location in the workspace defines {TICKET_JOB}")
