"""The code location ``benchmarks/orchestration.py`` runs through ``dagster-daemon``.

The product's own phase assets, checks, ``ticket_run`` job and executor, with a scripted domain
whose every phase runs the same fixed subprocess work (``work_argv``) and returns a scripted value,
plus a sensor that turns lines of ``$VERANDA_BENCH_DIR/requests.txt`` into ticket runs the way
the intake sensors do (dynamic partition + ``ticket_run_request``), at the intake sensors' real
interval (``LINEAR_POLL_INTERVAL_S``), beside the product's own ``pr_feedback`` and
``ticket_run_failures`` sensors at theirs, running. What the benchmark then measures beyond
that work is the orchestration: sensors, queue, run worker, steps, storage.

The pipeline's collaborators are ``tests.support.resources.nested()`` (offline, unconfigured):
whatever ``PipelineResource`` comes to require, the benchmark takes it from the one helper the
tests use, so the code location keeps loading (``tests/benchmarks`` imports it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from tests.assets.fakes import ScriptedDomain
from tests.support.resources import nested
from veranda_dagster.assets import CHECKS, PHASE_ASSETS
from veranda_dagster.executor import phase_executor
from veranda_dagster.jobs import ticket_run
from veranda_dagster.partitions import TICKET_JOB, TICKETS
from veranda_dagster.plugins import load_plugins
from veranda_dagster.resources.domain_calls import DOMAIN_CALLS_KEY
from veranda_dagster.sensors.pr_feedback import pr_feedback
from veranda_dagster.sensors.run_failure import ticket_run_failures
from veranda_dagster.sources.dedup import ticket_run_request
from veranda_dagster.sources.linear.limits import LINEAR_POLL_INTERVAL_S
from veranda_dagster.storage import ValueStore, VerandaIOManager

BENCH_DIR_ENV = "VERANDA_BENCH_DIR"
WORK_S_ENV = "VERANDA_BENCH_WORK_S"
WAIT_S_ENV = "VERANDA_BENCH_WAIT_S"
SENSOR_S_ENV = "VERANDA_BENCH_SENSOR_S"
"""Override of the request sensor's interval (a test's quick run); unset = the intake's."""

MODEL_WAIT_S = 3.0
"""Seconds a phase's work waits, as a phase waits on a remote model API: a real turn takes
10-60 s of which this machine spends almost no CPU. Kept short so N=16 finishes in minutes;
the orchestration overhead per ticket does not depend on it, only the ratios' denominator."""

MODEL_CPU_S = 0.2
"""CPU seconds a model-like phase spends locally (spawning the CLI, git, parsing its stream)."""

_BUSY = (
    "import time\n"
    "end = time.process_time() + {seconds}\n"
    "while time.process_time() < end:\n"
    "    sum(range(1000))\n"
    "time.sleep({wait})\n"
)


def work_argv(seconds: float, wait_s: float = 0.0) -> list[str]:
    """One phase's subprocess work: a fresh interpreter burning ``seconds`` of CPU (a stand-in
    for the git, agent CLI and test commands a phase runs), then waiting ``wait_s`` (a stand-in
    for the model's answer arriving over the network)."""
    return [sys.executable, "-S", "-c", _BUSY.format(seconds=seconds, wait=wait_s)]


def run_work(seconds: float, wait_s: float = 0.0) -> None:
    subprocess.run(work_argv(seconds, wait_s), check=True)


class BenchDomain(ScriptedDomain):
    work_s: float = 0.5
    wait_s: float = 0.0

    def _record(self, phase: str) -> None:
        super()._record(phase)
        run_work(self.work_s, self.wait_s)


def _bench_dir() -> Path:
    return Path(os.environ.get(BENCH_DIR_ENV, ".veranda/bench"))


def sensor_interval_s() -> int:
    return int(os.environ.get(SENSOR_S_ENV) or LINEAR_POLL_INTERVAL_S)


@dg.sensor(
    name="bench_requests",
    job_name=TICKET_JOB,
    minimum_interval_seconds=sensor_interval_s(),
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
    load_plugins()  # as definitions.py does: this code location scrubs like the product's
    root = _bench_dir()
    store = ValueStore(store_kind="filesystem", base_dir=str(root / "values"))
    domain = BenchDomain(
        counter_dir=str(root / "calls"),
        values_dir=str(root / "values"),
        work_s=float(os.environ.get(WORK_S_ENV, "0.5")),
        wait_s=float(os.environ.get(WAIT_S_ENV, "0")),
    )
    (root / "calls").mkdir(parents=True, exist_ok=True)
    return dg.Definitions(
        assets=PHASE_ASSETS,
        asset_checks=CHECKS,
        jobs=[ticket_run],
        sensors=[bench_requests, pr_feedback, ticket_run_failures],
        resources={
            **nested(),
            DOMAIN_CALLS_KEY: domain,
            "value_store": store,
            "io_manager": VerandaIOManager(store=store),
        },
        executor=phase_executor,
    )


defs = build()
