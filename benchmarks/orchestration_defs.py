"""The code location ``benchmarks/orchestration.py`` runs through ``dagster-daemon``.

The product's own phase assets, checks, ``ticket_run`` job and executor, with a pipeline whose
every phase runs the same fixed subprocess work (``work_argv``) and returns a scripted value,
plus a sensor that turns lines of ``$VERANDA_BENCH_DIR/requests.txt`` into ticket runs the way
the intake sensors do (dynamic partition + ``ticket_run_request``). What the benchmark then
measures beyond that work is the orchestration: sensor, queue, run worker, steps, storage.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from tests.assets.fakes import CountingPipeline
from veranda_dagster.assets import CHECKS, PHASE_ASSETS
from veranda_dagster.executor import phase_executor
from veranda_dagster.jobs import ticket_run
from veranda_dagster.partitions import TICKET_JOB, TICKETS
from veranda_dagster.sensors.dedup import ticket_run_request
from veranda_dagster.storage import ValueStore, VerandaIOManager

BENCH_DIR_ENV = "VERANDA_BENCH_DIR"
WORK_S_ENV = "VERANDA_BENCH_WORK_S"

_BUSY = (
    "import time\n"
    "end = time.process_time() + {seconds}\n"
    "while time.process_time() < end:\n"
    "    sum(range(1000))\n"
)


def work_argv(seconds: float) -> list[str]:
    """One phase's subprocess work: a fresh interpreter burning ``seconds`` of CPU (a stand-in
    for the git, agent CLI and test commands a phase runs)."""
    return [sys.executable, "-S", "-c", _BUSY.format(seconds=seconds)]


def run_work(seconds: float) -> None:
    subprocess.run(work_argv(seconds), check=True)


class BenchPipeline(CountingPipeline):
    work_s: float = 0.5

    def _record(self, phase: str) -> None:
        super()._record(phase)
        run_work(self.work_s)


def _bench_dir() -> Path:
    return Path(os.environ.get(BENCH_DIR_ENV, ".veranda/bench"))


@dg.sensor(
    name="bench_requests",
    job_name=TICKET_JOB,
    minimum_interval_seconds=1,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def bench_requests(context: dg.SensorEvaluationContext) -> dg.SensorResult:
    lines = (_bench_dir() / "requests.txt").read_text().split() if _bench_dir().exists() else []
    start = int(context.cursor or 0)
    keys = lines[start:]
    return dg.SensorResult(
        run_requests=[ticket_run_request(k) for k in keys],
        dynamic_partitions_requests=[TICKETS.build_add_request(keys)] if keys else [],
        cursor=str(len(lines)),
    )


def build() -> dg.Definitions:
    root = _bench_dir()
    store = ValueStore(backend="filesystem", base_dir=str(root / "values"))
    pipeline = BenchPipeline(
        counter_dir=str(root / "calls"), work_s=float(os.environ.get(WORK_S_ENV, "0.5"))
    )
    (root / "calls").mkdir(parents=True, exist_ok=True)
    return dg.Definitions(
        assets=PHASE_ASSETS,
        asset_checks=CHECKS,
        jobs=[ticket_run],
        sensors=[bench_requests],
        resources={
            "pipeline": pipeline,
            "value_store": store,
            "io_manager": VerandaIOManager(store=store),
        },
        executor=phase_executor,
    )


defs = build()
