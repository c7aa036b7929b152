"""What orchestration costs a ticket: through ``dagster-daemon`` vs the same work run directly.

For each N in ``--n`` (default 1, 4, 16), in one run of this script:

* **floor**: the subprocess work of N tickets run directly, at most ``--slots`` tickets at once
  (the shipped dagster.yaml's ticket-run limit), each ticket's nine phases one after another:
  the least any orchestrator could take;
* **daemon**: the same N tickets through the real thing: a fresh ``DAGSTER_HOME`` holding the
  shipped ``dagster.yaml``, ``dagster-daemon run`` on a workspace whose code location is
  ``benchmarks/orchestration_defs.py`` (the product's assets, checks, ``ticket_run`` job and
  executor; a scripted domain that runs the same subprocess work per phase), and a sensor turning
  requested keys into ticket runs, as the intake sensors do. Sensor, queue, launcher, run
  worker, step processes, event log and value store are all the shipped ones.

Reported per N: wall of all N tickets (request to last run end), per-ticket wall (request to
its run's end, and run start to end), CPU seconds per ticket (every descendant process,
collected as a child subreaper), and the ratios the issue asks for: solo ticket wall over its
floor, and throughput at the largest N over the solo rate.

The phase work is model-like by default (``--work model``): a little CPU, then a wait, because
a real phase's time is the model's, spent on a remote server, and a benchmark whose phases
burn CPU measures the two cores' contention instead of the orchestration (its own floor could
not reach 3x at N=16 with 4 slots on 2 cores). ``--work cpu`` keeps the CPU-bound variant.
Run it with ``nice``; N=16 takes a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.orchestration_defs import (  # noqa: E402
    BENCH_DIR_ENV,
    MODEL_CPU_S,
    MODEL_WAIT_S,
    WAIT_S_ENV,
    WORK_S_ENV,
    run_work,
)

PHASES_WITH_WORK = 9
"""Phases whose scripted domain call runs the work (the four checks read stored values only)."""

RUN_TIMEOUT_S = 1_800.0
PR_SET_CHILD_SUBREAPER = 36


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Reaper:
    """Make this process the subreaper of everything it starts, and reap whatever is
    reparented to it, so RUSAGE_CHILDREN counts every descendant's CPU."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.reap()
            time.sleep(0.2)

    def reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.reap()


def floor(n: int, slots: int, work_s: float, wait_s: float) -> dict[str, float]:
    """N tickets' subprocess work, ``slots`` tickets at a time, phases in order."""
    cpu0, t0 = _children_cpu(), time.perf_counter()

    def ticket(_: int) -> None:
        for _ in range(PHASES_WITH_WORK):
            run_work(work_s, wait_s)

    with ThreadPoolExecutor(max_workers=slots) as pool:
        list(pool.map(ticket, range(n)))
    return {"wall_s": time.perf_counter() - t0, "cpu_per_ticket_s": (_children_cpu() - cpu0) / n}


def _write_workspace(home: Path) -> Path:
    workspace = home / "workspace.yaml"
    workspace.write_text(
        "load_from:\n"
        "  - python_module:\n"
        "      module_name: benchmarks.orchestration_defs\n"
        f"      working_directory: {ROOT}\n"
        "      location_name: bench\n"
    )
    return workspace


def _wait_for_runs(home: Path, n: int, deadline: float) -> list[dict[str, float | str]]:
    import dagster as dg
    from dagster._core.instance.ref import InstanceRef

    finished = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE}
    finished |= {dg.DagsterRunStatus.CANCELED}
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        while time.time() < deadline:
            records = instance.get_run_records()
            done = [r for r in records if r.dagster_run.status in finished]
            if len(done) >= n:
                return [
                    {
                        "key": r.dagster_run.tags.get("veranda/ticket", ""),
                        "status": r.dagster_run.status.value,
                        "created": r.create_timestamp.timestamp(),
                        "start": float(r.start_time or 0.0),
                        "end": float(r.end_time or 0.0),
                    }
                    for r in done
                ]
            time.sleep(0.5)
    raise TimeoutError(f"{n} runs did not finish in time under {home}")


def _create_storage(home: Path) -> None:
    import dagster as dg
    from dagster._core.instance.ref import InstanceRef

    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        instance.get_runs(limit=1)


def through_daemon(n: int, work_s: float, wait_s: float, keep: bool) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="veranda-bench-"))
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")  # the shipped instance config
    bench = home / "bench"
    bench.mkdir()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        BENCH_DIR_ENV: str(bench),
        WORK_S_ENV: str(work_s),
        WAIT_S_ENV: str(wait_s),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    _create_storage(home)  # before the daemon and its code server race to create it
    daemon_bin = shutil.which("dagster-daemon") or "dagster-daemon"
    log = (home / "daemon.log").open("w")
    cpu0 = _children_cpu()
    daemon = subprocess.Popen(
        [daemon_bin, "run", "-w", str(_write_workspace(home))],
        env=env,
        cwd=home,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        time.sleep(5)  # the daemon's own start-up, before the clock starts (not a ticket's)
        keys = [f"BENCH-{i}" for i in range(1, n + 1)]
        t0 = time.time()
        (bench / "requests.txt").write_text("\n".join(keys) + "\n")
        runs = _wait_for_runs(home, n, t0 + RUN_TIMEOUT_S)
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()
        log.close()
    time.sleep(1.0)  # let the last orphans exit so the reaper collects their CPU
    cpu = _children_cpu() - cpu0
    failed = [r for r in runs if r["status"] != "SUCCESS"]
    if failed:
        raise RuntimeError(f"{len(failed)} runs failed; see {home}/daemon.log")
    if not keep:
        shutil.rmtree(home, ignore_errors=True)
    ends = [float(r["end"]) for r in runs]
    return {
        "wall_s": max(ends) - t0,
        "ticket_wall_s": statistics.median(float(r["end"]) - float(r["created"]) for r in runs),
        "sensor_s": statistics.median(float(r["created"]) - t0 for r in runs),
        "run_wall_s": statistics.median(float(r["end"]) - float(r["start"]) for r in runs),
        "queue_s": statistics.median(float(r["start"]) - float(r["created"]) for r in runs),
        "cpu_per_ticket_s": cpu / n,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", default="1,4,16", help="ticket counts, comma-separated")
    parser.add_argument("--slots", type=int, default=4, help="ticket-run limit (dagster.yaml)")
    parser.add_argument(
        "--work",
        choices=("model", "cpu"),
        default="model",
        help="model: each phase burns MODEL_CPU_S and waits MODEL_WAIT_S, as a phase waiting on "
        "a model API does (the default); cpu: each phase burns --work-s CPU seconds",
    )
    parser.add_argument("--work-s", type=float, default=0.5, help="CPU seconds per phase (cpu)")
    parser.add_argument("--keep", action="store_true", help="keep each DAGSTER_HOME")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    work_s, wait_s = (MODEL_CPU_S, MODEL_WAIT_S) if args.work == "model" else (args.work_s, 0.0)
    print(f"phase work: {work_s} CPU-s then {wait_s} s waiting, x{PHASES_WITH_WORK} phases")
    reaper = Reaper()
    results: dict[str, dict[str, dict[str, float]]] = {}
    try:
        for n in [int(x) for x in args.n.split(",")]:
            results[str(n)] = {
                "floor": floor(n, args.slots, work_s, wait_s),
                "daemon": through_daemon(n, work_s, wait_s, args.keep),
            }
            print(f"N={n}: {json.dumps(results[str(n)])}", flush=True)
    finally:
        reaper.stop()
    solo = results.get("1")
    print(
        "\n| N | floor wall s | daemon wall s | ticket wall s (queued to end, median) | "
        "of which queue s | sensor s | CPU s/ticket floor | CPU s/ticket daemon | tickets/min |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n, r in results.items():
        f, d = r["floor"], r["daemon"]
        print(
            f"| {n} | {f['wall_s']:.1f} | {d['wall_s']:.1f} | {d['ticket_wall_s']:.1f} | "
            f"{d['queue_s']:.1f} | {d['sensor_s']:.1f} | {f['cpu_per_ticket_s']:.2f} | "
            f"{d['cpu_per_ticket_s']:.2f} | {int(n) / d['wall_s'] * 60:.2f} |"
        )
    if solo:
        f, d = solo["floor"], solo["daemon"]
        print(f"\nsolo ticket (queued to end) / its floor: {d['ticket_wall_s'] / f['wall_s']:.2f}x")
        print(
            f"solo ticket (request to end, with sensor) / floor: {d['wall_s'] / f['wall_s']:.2f}x"
        )
        print(f"solo run (start to end) / floor: {d['run_wall_s'] / f['wall_s']:.2f}x")
        largest = max(results, key=int)
        if largest != "1":
            rate = int(largest) / results[largest]["daemon"]["wall_s"]
            print(f"throughput at N={largest} / solo rate: {rate * d['wall_s']:.2f}x")
            floor_rate = int(largest) / results[largest]["floor"]["wall_s"] * f["wall_s"]
            print(f"(the floor's own: {floor_rate:.2f}x)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
