"""Where a ticket run's orchestration CPU goes once its worker is up: CPU per run by cause.

``orchestration.py`` measures the whole tree (daemon, code server, run worker, steps) and so
mixes the run worker's start, the daemon's idle loop and the machine's load into one figure.
This isolates the part a run pays *after* its worker has imported Dagster and loaded the code
location: the benchmark code location's ``ticket_run`` job (the product's phase assets, checks,
executor, IO manager and value store; phase work set to zero, so every CPU-second here is
orchestration) executed ``--runs`` times in one process against a fresh instance made from
the shipped ``dagster.yaml`` (SQLite under a temp ``DAGSTER_HOME``). Per run it reports, as
median and spread (min-max) of the runs after the first (which pays lazy imports):

* CPU seconds of the run (this process's user + system time; the steps run in process);
* events written and their count by type, and the CPU spent storing them;
* the dynamic-partition lookups Dagster makes (``has_dynamic_partition`` asked of the
  instance) and how many of them reached the event log storage (one query each; the shipped
  ``VerandaInstance`` answers a repeated *yes* from memory);
* the runs queries the phases' twin check makes (``older_run_in_progress``);

plus the one-off CPU of ``import dagster`` and of loading the code location (what every run
worker pays at its start), and the 1-minute load average. CPU seconds, not wall, so the
figures hold on a loaded machine. ``--plain-instance`` drops ``instance_class`` from the copied
``dagster.yaml`` (Dagster's own ``DagsterInstance`` and its own SQLite storage, which makes an
engine per connection): the anchor to run beside the shipped one in the same sitting. Run::

    python benchmarks/run_execution.py [--runs 6] [--plain-instance] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MAX_RUNS = 50
"""Bound on ``--runs``: each run is a few CPU-seconds on SQLite."""


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def counted(owner: Any, name: str, tally: collections.defaultdict[str, float]) -> Iterator[None]:
    """Wrap ``owner.name`` so each call adds 1 to ``tally[name]`` and its thread CPU seconds to
    ``tally[name + "_cpu_s"]``; restored on exit."""
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            tally[name] += 1
            tally[f"{name}_cpu_s"] += time.thread_time() - started

    own = name in vars(owner)
    setattr(owner, name, wrapper)
    try:
        yield
    finally:
        if own:
            setattr(owner, name, original)
        else:
            delattr(owner, name)  # it was inherited: leave the class as it was


def measure(runs: int, plain_instance: bool = False) -> dict[str, Any]:
    """``runs`` ticket runs in this process on a fresh shipped-config instance (Dagster's own
    instance class with ``plain_instance``); see above."""
    if not 1 <= runs <= MAX_RUNS:
        raise ValueError(f"--runs must be 1-{MAX_RUNS}")
    home = Path(tempfile.mkdtemp(prefix="veranda-run-execution-"))
    config = yaml.safe_load((ROOT / "dagster.yaml").read_text())
    if plain_instance:
        config.pop("instance_class", None)
    (home / "dagster.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {
        "DAGSTER_HOME": str(home),
        "VERANDA_BENCH_DIR": str(home / "bench"),
        "VERANDA_BENCH_WORK_S": "0",
        "VERANDA_BENCH_WAIT_S": "0",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    load0 = os.getloadavg()[0]
    try:
        started = cpu_s()
        import dagster as dg

        imported = cpu_s()
        import benchmarks.orchestration_defs as bench
        from veranda_dagster.assets import _shell

        defs = bench.build()
        loaded = cpu_s()
        samples = _runs(dg, defs, runs, _shell)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(home, ignore_errors=True)
    steady = samples[1:] or samples
    return {
        "import_dagster_cpu_s": imported - started,
        "load_code_location_cpu_s": loaded - imported,
        "runs": len(samples),
        "instance_class": "DagsterInstance" if plain_instance else "shipped",
        "per_run": {
            key: _spread([s[key] for s in steady])
            for key in steady[0]
            if not key.startswith("event:")
        },
        "events_by_type": {
            key.removeprefix("event:"): value for key, value in steady[-1].items()
            if key.startswith("event:")
        },
        "load": (load0 + os.getloadavg()[0]) / 2,
    }  # fmt: skip


def _runs(dg: Any, defs: Any, runs: int, shell: Any) -> list[dict[str, float]]:
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

    job = defs.resolve_job_def("ticket_run")
    samples: list[dict[str, float]] = []
    with dg.DagsterInstance.get() as instance:
        storage = type(instance.event_log_storage)
        for i in range(runs):
            key = f"BENCH-{i}"
            instance.add_dynamic_partitions("tickets", [key])
            tally: collections.defaultdict[str, float] = collections.defaultdict(float)
            storage_tally: collections.defaultdict[str, float] = collections.defaultdict(float)
            with (
                counted(SqliteEventLogStorage, "store_event", tally),
                counted(type(instance), "has_dynamic_partition", tally),
                counted(storage, "has_dynamic_partition", storage_tally),
                counted(shell, "older_run_in_progress", tally),
            ):
                before = cpu_s()
                result = job.execute_in_process(partition_key=key, instance=instance)
                spent = cpu_s() - before
            if not result.success:
                raise RuntimeError(f"run {result.run_id} failed")
            types = collections.Counter(
                e.dagster_event.event_type_value
                for e in instance.all_logs(result.run_id)
                if e.dagster_event is not None
            )
            samples.append(
                {
                    "cpu_s": spent,
                    "events": float(sum(types.values())),
                    "event_store_cpu_s": tally["store_event_cpu_s"],
                    "dynamic_partition_lookups": float(tally["has_dynamic_partition"]),
                    "dynamic_partition_lookup_cpu_s": tally["has_dynamic_partition_cpu_s"],
                    "dynamic_partition_queries": float(storage_tally["has_dynamic_partition"]),
                    "twin_checks": float(tally["older_run_in_progress"]),
                    **{f"event:{name}": float(n) for name, n in types.items()},
                }
            )
    return samples


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def render(result: dict[str, Any]) -> str:
    lines = [
        f"import dagster: {result['import_dagster_cpu_s']:.2f} CPU-s; load the code location: "
        f"{result['load_code_location_cpu_s']:.2f} CPU-s (once per run worker)",
        f"per run (median (min-max) of {max(1, result['runs'] - 1)} runs after the first), "
        f"{result['instance_class']} instance, load {result['load']:.1f}:",
    ]
    for key, cell in result["per_run"].items():
        lines.append(f"  {key}: {cell['median']:.3f} ({cell['min']:.3f}-{cell['max']:.3f})")
    events = ", ".join(f"{n:g} {name}" for name, n in sorted(result["events_by_type"].items()))
    lines.append(f"events of the last run: {events}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=6, help=f"ticket runs (1-{MAX_RUNS})")
    parser.add_argument(
        "--plain-instance", action="store_true", help="Dagster's own instance class (the anchor)"
    )
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    result = measure(args.runs, plain_instance=args.plain_instance)
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
