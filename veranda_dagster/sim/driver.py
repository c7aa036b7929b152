"""Drive the real Dagster definitions the way the daemon would, in one small process.

``tick`` evaluates a sensor of the product's ``Definitions`` once against the instance (cursor
carried between ticks, like the daemon's), adds the dynamic partitions it asks for, and
returns its run requests; ``execute_ticket`` launches the ``ticket_run`` job for one request
(on the product's executor; the run is one process group to watch or kill), and
``reexecute_from_failure`` resumes a failed run the way ``run_retries`` does. Nothing here
replaces product code: the sensors, assets, resources and IO manager are the shipped ones,
configured by the environment ``SimWorld`` wrote.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.instance.ref import InstanceRef

from veranda_dagster.partitions import TICKET_JOB, TICKETS_NAME

LOG_LEVEL_ENV = "VERANDA_SIM_LOG_LEVEL"


def run_config() -> dict[str, Any]:
    """The product's own executor (``veranda_dagster.executor``: steps in the run worker's
    process, so a SIGKILL of the worker ends the run), so the demo measures what production
    runs; and a quiet console log unless asked otherwise."""
    level = os.environ.get(LOG_LEVEL_ENV, "WARNING")
    return {"loggers": {"console": {"config": {"log_level": level}}}}


def ticket_job() -> dg.JobDefinition:
    """Module-level, so ``dg.reconstructable`` can point a run worker at it."""
    from veranda_dagster.definitions import build_definitions

    return build_definitions().resolve_job_def(TICKET_JOB)


def instance_for(home: str) -> dg.DagsterInstance:
    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(home))


@dataclass
class SensorDriver:
    """Keeps each sensor's cursor between ticks, as the daemon stores it."""

    cursors: dict[str, str | None] = field(default_factory=dict)
    skips: list[str] = field(default_factory=list)

    def tick(self, instance: dg.DagsterInstance, sensor_name: str) -> list[dg.RunRequest]:
        from veranda_dagster.definitions import build_definitions

        defs = build_definitions()
        sensor = defs.resolve_sensor_def(sensor_name)
        resources = defs.resources or {}
        needed = {k: resources[k] for k in sensor.required_resource_keys if k in resources}
        context = dg.build_sensor_context(
            instance=instance,
            cursor=self.cursors.get(sensor_name),
            resources=needed,
            definitions=defs,
        )
        result = sensor(context)
        if isinstance(result, dg.SkipReason):
            self.skips.append(result.skip_message or "")
            return []
        if not isinstance(result, dg.SensorResult):
            raise TypeError(f"{sensor_name} returned {type(result).__name__}")
        for request in result.dynamic_partitions_requests or []:
            keys = list(getattr(request, "partition_keys", []) or [])
            if keys:
                instance.add_dynamic_partitions(TICKETS_NAME, keys)
        if result.cursor is not None:
            self.cursors[sensor_name] = result.cursor
        return list(result.run_requests or [])


def run_tags(request: dg.RunRequest) -> dict[str, str]:
    tags = dict(request.tags or {})
    if request.partition_key:
        tags["dagster/partition"] = request.partition_key
    if request.run_key:
        tags["dagster/run_key"] = request.run_key
    return tags


def execute_ticket(instance: dg.DagsterInstance, tags: dict[str, str]) -> Any:
    job = dg.reconstructable(ticket_job)
    with dg.execute_job(job, instance, run_config=run_config(), tags=tags) as result:
        return result.run_id, result.success


def reexecute_from_failure(instance: dg.DagsterInstance, run_id: str) -> tuple[str, bool]:
    """What ``run_retries`` does for a dead run: mark it failed (run monitoring's job), then
    re-execute from failure; finished phases load from the durable IO manager."""
    run = instance.get_run_by_id(run_id)
    if run is None:
        raise ValueError(f"no run {run_id}")
    if not run.is_finished:
        instance.report_run_failed(run, "run worker died (simulated SIGKILL)")
    options = dg.ReexecutionOptions.from_failure(run_id, instance)
    tags = {
        k: v
        for k, v in run.tags.items()
        if not k.startswith("dagster/") or k in ("dagster/partition",)
    }
    job = dg.reconstructable(ticket_job)
    with dg.execute_job(
        job, instance, run_config=run_config(), tags=tags, reexecution_options=options
    ) as result:
        return result.run_id, result.success


def spawn_ticket_run(
    tags: dict[str, str], env: dict[str, str], resume: str | None = None
) -> subprocess.Popen[str]:
    """The run worker as its own process group (``python -m veranda_dagster.sim.driver``), so
    a test can SIGKILL it and everything it started mid-phase. A fresh process also loads the
    definitions from the environment as it is now (a process caches a loaded job)."""
    args = [sys.executable, "-m", "veranda_dagster.sim.driver"]
    args += ["resume", resume] if resume else ["run", *(f"{k}={v}" for k, v in tags.items())]
    return subprocess.Popen(
        args,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def run_ticket_process(
    tags: dict[str, str], env: dict[str, str], resume: str | None = None, timeout: float = 300
) -> tuple[str, bool]:
    """Run (or resume) a ticket in a fresh worker process and wait: (run id, success)."""
    proc = spawn_ticket_run(tags, env, resume)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_run_worker(proc)
        raise
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines or len(lines[-1].split()) != 2:
        raise RuntimeError(f"run worker exited {proc.returncode}: {err[-2000:]}")
    run_id, status = lines[-1].split()
    return run_id, status == "success"


def kill_run_worker(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the worker's whole process group: no cleanup, no event written."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def kill_agents_in(folder: str | Path) -> list[int]:
    """SIGKILL the process group of every process working inside ``folder`` (the agent CLIs a
    killed run worker left behind: the runner starts each in its own session, so killing the
    worker's group does not reach them, though a dying pod would). Returns their pids."""
    root = Path(folder).resolve()
    killed: list[int] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = (proc / "cwd").resolve()
        except OSError:  # gone, or not ours to read
            continue
        if cwd == root or root in cwd.parents:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(int(proc.name)), signal.SIGKILL)
                killed.append(int(proc.name))
    return killed


def _main(argv: list[str]) -> int:
    with instance_for(os.environ["DAGSTER_HOME"]) as instance:
        if argv[:1] == ["resume"]:
            run_id, ok = reexecute_from_failure(instance, argv[1])
        else:
            run_id, ok = execute_ticket(instance, dict(a.split("=", 1) for a in argv[1:]))
    print(run_id, "success" if ok else "failure", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
