"""What one sensor tick costs as the ticket partitions grow: 1k and 10k tickets.

A worker that takes a hundred tickets a day holds ten thousand partitions within months, and
every sensor tick runs against that instance. For each N in ``--n`` (default 1000, 10000) this
builds a fresh instance from the shipped ``dagster.yaml`` (SQLite under a temp
``DAGSTER_HOME``) holding N ticket partitions, N finished ticket runs tagged with their key,
and N ``pull_request`` materializations carrying a PR URL (what N delivered tickets leave),
then times, ``--repeat`` times each (median and spread, in milliseconds):

* **intake**: the intake sensors' per-tick question for a batch of new and known keys
  (``ticket_holds(..., registered=True)``: one runs query, one partitions query);
* **pr_feedback cold**: a ``pr_feedback`` tick from an empty cursor (after a restart), which
  learns PRs from the event log a bounded page at a time and polls a bounded few;
* **pr_feedback warm**: the next tick, from the cursor the cold one left;
* **workspace_sweep PRs**: the sweep's read of the latest PR of 50 clones' tickets.

The forge answers from memory with no comments, so what is timed is the instance's work.
Run::

    python benchmarks/sensor_tick.py [--n 1000,10000] [--repeat 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dagster as dg  # noqa: E402
from dagster._core.instance.ref import InstanceRef  # noqa: E402
from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus  # noqa: E402

from veranda_dagster.domain.core.forge_port import Comment, ForgePR  # noqa: E402
from veranda_dagster.partitions import TICKET_TAG  # noqa: E402
from veranda_dagster.sensors.pr_feedback import poll_pr_feedback  # noqa: E402
from veranda_dagster.sensors.workspace_sweep import closed_pull_requests  # noqa: E402
from veranda_dagster.sources.dedup import ticket_holds  # noqa: E402

NEW_KEYS_PER_TICK = 20
"""An intake tick's batch: new tickets plus as many already known."""
SWEPT_CLONES = 50
"""Clones on disk a sweep asks about (the rest were evicted)."""


class QuietForge:
    """Every PR open, none with a comment."""

    def list_comments(self, repo: str, number: int) -> list[Comment]:
        return []

    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None:
        return ForgePR(number=1, url="u", head_ref=head_branch)


class _Log:
    def warning(self, message: str) -> None:
        pass

    info = warning


def populate(instance: dg.DagsterInstance, n: int) -> list[str]:
    """N delivered tickets: partition, finished tagged run, pull_request materialization."""
    keys = [f"ENG-{i}" for i in range(1, n + 1)]
    instance.add_dynamic_partitions("tickets", keys)
    for key in keys:
        instance.add_run(
            DagsterRun(
                job_name="ticket_run",
                run_id=str(uuid.uuid4()),
                status=DagsterRunStatus.SUCCESS,
                tags={TICKET_TAG: key, "dagster/partition": key},
            )
        )
        instance.report_runless_asset_event(
            dg.AssetMaterialization(
                asset_key="pull_request",
                partition=key,
                metadata={
                    "pr_url": f"https://github.com/acme/billing/pull/{key[4:]}",
                    "pr_number": int(key[4:]),
                },
            )
        )
    return keys


def timed(fn: Callable[[], object], repeat: int) -> dict[str, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def measure(n: int, repeat: int, base_dir: str | None = None) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="veranda-sensor-tick-", dir=base_dir))
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    try:
        with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
            started = time.perf_counter()
            keys = populate(instance, n)
            setup_s = time.perf_counter() - started
            batch = [f"NEW-{i}" for i in range(NEW_KEYS_PER_TICK)] + keys[-NEW_KEYS_PER_TICK:]
            forge = QuietForge()
            cold = poll_pr_feedback(instance, forge, None, _Log())
            cursor = cold.cursor if isinstance(cold, dg.SensorResult) else None

            def parse(url: str) -> tuple[str, int] | None:
                return ("acme/billing", int(url.rsplit("/", 1)[1])) if url else None

            swept = keys[-SWEPT_CLONES:]
            return {
                "setup_s": setup_s,
                "intake_ms": timed(lambda: ticket_holds(instance, batch, registered=True), repeat),
                "pr_feedback_cold_ms": timed(
                    lambda: poll_pr_feedback(instance, forge, None, _Log()), repeat
                ),
                "pr_feedback_warm_ms": timed(
                    lambda: poll_pr_feedback(instance, forge, cursor, _Log()), repeat
                ),
                "sweep_prs_ms": timed(
                    lambda: closed_pull_requests(instance, swept, forge, parse), repeat
                ),
            }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _cell(stats: dict[str, float]) -> str:
    return f"{stats['median']:.1f} ({stats['min']:.1f}-{stats['max']:.1f})"


def render(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| tickets | intake tick ms | pr_feedback cold ms | pr_feedback warm ms | "
        "sweep PR read ms |",
        "|---|---|---|---|---|",
    ]
    for n, r in results.items():
        lines.append(
            f"| {n} | {_cell(r['intake_ms'])} | {_cell(r['pr_feedback_cold_ms'])} | "
            f"{_cell(r['pr_feedback_warm_ms'])} | {_cell(r['sweep_prs_ms'])} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--n", default="1000,10000", help="ticket counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--dir",
        help="where the instance is made (e.g. /dev/shm: filling 10k tickets' events on a busy "
        "disk takes many minutes; the timed ticks are reads)",
    )
    args = parser.parse_args(argv)
    print(f"cores: {os.cpu_count()}, load at start: {os.getloadavg()}")
    results: dict[str, dict[str, Any]] = {}
    for n in [int(x) for x in args.n.split(",")]:
        results[str(n)] = measure(n, args.repeat, args.dir)
        results[str(n)]["load"] = os.getloadavg()[0]
        print(f"N={n}: {json.dumps(results[str(n)])}", flush=True)
    print("\n" + render(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
