"""What orchestration costs a ticket: through ``dagster-daemon`` vs the same work run directly.

For each N in ``--n`` (default 1, 4, 16), ``--repeat`` times, floor and product interleaved
(floor first on even repeats, product first on odd ones, so a drift in the machine's load
falls on both alike):

* **floor**: the subprocess work of N tickets run directly, at most ``--slots`` tickets at once
  (the shipped dagster.yaml's ticket-run limit), each ticket's nine phases one after another:
  the least any orchestrator could take;
* **product**: the same N tickets through the real thing: a fresh ``DAGSTER_HOME`` holding the
  shipped ``dagster.yaml``, ``dagster-daemon run`` on a workspace whose code location is
  ``benchmarks/orchestration_defs.py`` (the product's assets, checks, ``ticket_run`` job and
  executor; a scripted domain that runs the same subprocess work per phase), a request sensor at the
  intake sensors' real interval and the product's own ``pr_feedback`` and
  ``ticket_run_failures`` sensors at theirs. Sensors, queue, launcher, run worker, step
  processes, event log and value store are all the shipped ones.

How the product learns of the tickets (``--intake``): **push** (the default), one signed
Linear ``Issue`` webhook per ticket posted to the product's receiver, ``veranda intake serve``,
started beside the daemon on the same instance and workspace (its CPU is in the tree's, its
start in the daemon start's); **poll**, the request sensor at the intake's poll interval
(``LINEAR_POLL_INTERVAL_S``), the only path before the push intake existed.

Reported per cell, as the median of the repeats with their spread (min-max): wall of all N
tickets from the moment they were requested to the last run's end (**request→end**, what a
user waits: with push from the first POST; with poll the sensor latency included: repeat r of
R requests at (r + 1/2) / R of the sensor's interval after its first tick, as requests
arriving at random would on average), the same less
the intake's poll wait (first run created → last run's end: queue, launch and the runs, what
orchestration owns) and each run's own start→end; the time before a run
starts (sensor, queue, launch); CPU seconds of every descendant process (``proc_cpu``: the
live tree read from ``/proc`` plus everything reaped as child subreaper) for the daemon's
start, its idle rate (between its first sensor tick and the request, no ticket in flight),
and per ticket from request to the end, also less that idle rate over the cell's wall (what
the tickets themselves cost); the 1-minute load average around the cell.

The phase work is model-like by default (``--work model``): a little CPU, then a wait, because
a real phase's time is the model's, spent on a remote server. ``--work cpu`` keeps the
CPU-bound variant. Run it with ``nice``; on 2 cores N=16 takes minutes per repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.orchestration_defs import (  # noqa: E402
    BENCH_DIR_ENV,
    MODEL_CPU_S,
    MODEL_WAIT_S,
    SENSOR_S_ENV,
    WAIT_S_ENV,
    WORK_S_ENV,
    run_work,
    sensor_interval_s,
)
from benchmarks.proc_cpu import Reaper, drain, tree_cpu  # noqa: E402

PHASES_WITH_WORK = 9
"""Phases whose scripted domain call runs the work (the four checks read stored values only)."""

INTAKES = ("push", "poll")
"""How the product cell learns of its tickets: ``push``, a signed Linear webhook per ticket
posted to ``veranda intake serve`` (the product's receiver, beside the daemon, on the same
instance and workspace); ``poll``, the request sensor at the intake's poll interval."""
PUSH_SECRET = "bench-webhook-secret"
"""The receiver's ``LINEAR_WEBHOOK_SECRET`` in the benchmark's own instance (loopback only)."""
PUSH_BOT = "bench-bot"
"""``LINEAR_BOT_USER_ID`` of the benchmark: every posted issue is assigned to it."""
IDLE_WINDOW_S = 10.0
"""With push, seconds between the daemon's first tick and the first POST, over which the
daemon's idle rate is measured (with poll the wait is the sampled part of the interval)."""
RECEIVER_READY_TIMEOUT_S = 120.0
"""Bound on the receiver's start (its workspace loaded and its port accepting)."""
POST_TIMEOUT_S = 60.0
"""Bound on one webhook POST's answer."""
RUN_TIMEOUT_S = 1_800.0
"""Bound on one cell's runs; past it the cell fails naming its DAGSTER_HOME."""
DAEMON_READY_TIMEOUT_S = 120.0
"""Bound on the daemon's start (its first request-sensor tick)."""
POLL_S = 0.5
SENSORS_ENV = "VERANDA_SENSORS"

Sample = dict[str, float]


def floor(n: int, slots: int, work_s: float, wait_s: float) -> Sample:
    """N tickets' subprocess work, ``slots`` tickets at a time, phases in order."""
    cpu0, t0 = tree_cpu(), time.perf_counter()

    def ticket(_: int) -> None:
        for _ in range(PHASES_WITH_WORK):
            run_work(work_s, wait_s)

    with ThreadPoolExecutor(max_workers=slots) as pool:
        list(pool.map(ticket, range(n)))
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "run_wall_s": wall / max(1, -(-n // slots)), "cpu_per_ticket_s":
            (tree_cpu() - cpu0) / n}  # fmt: skip


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


def _instance(home: Path) -> Any:
    import dagster as dg
    from dagster._core.instance.ref import InstanceRef

    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))


def _wait_for_first_tick(home: Path, deadline: float) -> None:
    """The daemon is up once the request sensor has ticked (its code location loaded)."""
    with _instance(home) as instance:
        while time.time() < deadline:
            states = [s for s in instance.all_instigator_state() if s.name == "bench_requests"]
            if states and instance.get_ticks(states[0].instigator_origin_id, states[0].selector_id):
                return
            time.sleep(POLL_S)
    raise TimeoutError(f"the daemon under {home} did not tick its sensor in time")


def _wait_for_runs(home: Path, n: int, deadline: float) -> list[dict[str, Any]]:
    import dagster as dg

    finished = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE}
    finished |= {dg.DagsterRunStatus.CANCELED}
    with _instance(home) as instance:
        while time.time() < deadline:
            records = instance.get_run_records()
            done = [r for r in records if r.dagster_run.status in finished]
            if len(done) >= n:
                return [
                    {
                        "status": r.dagster_run.status.value,
                        "created": r.create_timestamp.timestamp(),
                        "start": float(r.start_time or 0.0),
                        "end": float(r.end_time or 0.0),
                    }
                    for r in done
                ]
            time.sleep(POLL_S)
    raise TimeoutError(f"{n} runs did not finish in time under {home}")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_receiver(home: Path, workspace: Path, env: dict[str, str], log: Any) -> str:
    """``veranda intake serve`` of this checkout on a free loopback port; its URL once it
    accepts connections."""
    import socket

    port = _free_port()
    cli = "import sys; from veranda_dagster.cli import main; sys.exit(main(sys.argv[1:]))"
    receiver_env = {**env, "LINEAR_WEBHOOK_SECRET": PUSH_SECRET, "LINEAR_BOT_USER_ID": PUSH_BOT}
    subprocess.Popen(
        [sys.executable, "-c", cli, "intake", "serve", "--port", str(port), "-w", str(workspace)],
        env=receiver_env,
        cwd=home,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.time() + RECEIVER_READY_TIMEOUT_S
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return f"http://127.0.0.1:{port}/webhooks/linear"
        except OSError:
            time.sleep(POLL_S)
    raise TimeoutError(f"the receiver under {home} did not accept connections in time")


def _push(url: str, keys: list[str]) -> None:
    """One signed Linear ``Issue`` ``create`` webhook per key, as Linear posts them."""
    from veranda_dagster.sim.push_intake import linear_issue_body, post_signed_linear

    for key in keys:
        body = linear_issue_body(key, assignee_id=PUSH_BOT, delivery_id=f"bench-{key}")
        status = post_signed_linear(url, PUSH_SECRET, body, POST_TIMEOUT_S)
        if status != 201:
            raise RuntimeError(f"the receiver answered {status} for {key}")


def product(
    n: int, work_s: float, wait_s: float, sensor_s: int | None, keep: bool, phase: float = 0.0,
    intake: str = "push",
) -> Sample:  # fmt: skip
    """N tickets requested at once through ``dagster-daemon``: with ``poll``, ``phase`` (0-1)
    of a sensor interval after its first tick; with ``push``, posted to the receiver
    ``IDLE_WINDOW_S`` after it; see the module docstring."""
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
        SENSORS_ENV: "running",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    if sensor_s:
        env[SENSOR_S_ENV] = str(sensor_s)
    with _instance(home) as instance:  # before the daemon and its code server race to make it
        instance.get_runs(limit=1)
    daemon_bin = shutil.which("dagster-daemon") or "dagster-daemon"
    log = (home / "daemon.log").open("w")
    workspace = _write_workspace(home)
    cpu0, started = tree_cpu(), time.time()
    subprocess.Popen(
        [daemon_bin, "run", "-w", str(workspace)],
        env=env,
        cwd=home,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        url = _start_receiver(home, workspace, env, log) if intake == "push" else ""
        _wait_for_first_tick(home, started + DAEMON_READY_TIMEOUT_S)
        cpu_ready, t_ready = tree_cpu(), time.time()
        if intake == "push":
            time.sleep(IDLE_WINDOW_S)
        else:
            time.sleep(phase * (sensor_s or sensor_interval_s()))  # where in the interval
        cpu_t0, t0 = tree_cpu(), time.time()
        idle_rate = (cpu_t0 - cpu_ready) / max(t0 - t_ready, 1e-9)  # the daemon with no ticket
        keys = [f"BENCH-{i}" for i in range(1, n + 1)]
        if intake == "push":
            _push(url, keys)
        else:
            (bench / "requests.txt").write_text("".join(f"{k}\n" for k in keys))
        runs = _wait_for_runs(home, n, t0 + RUN_TIMEOUT_S)
        cpu_done, t_done = tree_cpu(), time.time()
    finally:
        drain()  # the daemon, its code server, run workers, steps and sandboxes, all counted
        log.close()
    failed = [r for r in runs if r["status"] != "SUCCESS"]
    if failed:
        raise RuntimeError(f"{len(failed)} runs failed; see {home}/daemon.log")
    if not keep:
        shutil.rmtree(home, ignore_errors=True)
    return {
        "wall_s": max(r["end"] for r in runs) - t0,
        "created_to_end_s": max(r["end"] for r in runs) - min(r["created"] for r in runs),
        "run_wall_s": statistics.median(r["end"] - r["start"] for r in runs),
        "before_start_s": statistics.median(r["start"] - t0 for r in runs),
        "sensor_s": statistics.median(r["created"] - t0 for r in runs),
        "daemon_start_cpu_s": cpu_ready - cpu0,
        "idle_cpu_s_per_min": idle_rate * 60,
        "cpu_per_ticket_s": (cpu_done - cpu_t0) / n,
        "cpu_per_ticket_less_idle_s": (cpu_done - cpu_t0 - idle_rate * (t_done - t0)) / n,
    }


def spread(samples: list[Sample]) -> dict[str, dict[str, float]]:
    """Per metric: median, min and max over the repeats."""
    keys = samples[0].keys()
    return {
        k: {
            "median": statistics.median(s[k] for s in samples),
            "min": min(s[k] for s in samples),
            "max": max(s[k] for s in samples),
        }
        for k in keys
    }


def measure(
    ns: list[int], repeat: int, slots: int, work_s: float, wait_s: float,
    sensor_s: int | None = None, keep: bool = False, intake: str = "push",
) -> dict[str, Any]:  # fmt: skip
    """Every cell, floor and product interleaved, with the load average around each."""
    results: dict[str, Any] = {}
    for n in ns:
        cells: dict[str, list[Sample]] = {"floor": [], "product": []}
        for r in range(repeat):
            order = ("floor", "product") if r % 2 == 0 else ("product", "floor")
            for kind in order:
                load0 = os.getloadavg()[0]
                if kind == "floor":
                    sample = floor(n, slots, work_s, wait_s)
                else:
                    phase = (r + 0.5) / repeat  # requests spread over the sensor's interval
                    sample = product(n, work_s, wait_s, sensor_s, keep, phase, intake)
                sample["load"] = (load0 + os.getloadavg()[0]) / 2
                cells[kind].append(sample)
                print(f"N={n} repeat {r + 1} {kind}: {json.dumps(sample)}", flush=True)
        results[str(n)] = {kind: spread(samples) for kind, samples in cells.items()}
    return results


def _cell(stats: dict[str, float], digits: int = 1) -> str:
    return f"{stats['median']:.{digits}f} ({stats['min']:.{digits}f}-{stats['max']:.{digits}f})"


def render(results: dict[str, Any]) -> str:
    """The markdown tables and the ratios the issue asks for (medians)."""
    lines = [
        "| N | floor wall s | product request→end s | product run created→end s | "
        "product run start→end s (median run) | request→run start s | load |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, r in results.items():
        f, p = r["floor"], r["product"]
        lines.append(
            f"| {n} | {_cell(f['wall_s'])} | {_cell(p['wall_s'])} | "
            f"{_cell(p['created_to_end_s'])} | {_cell(p['run_wall_s'])} | "
            f"{_cell(p['before_start_s'])} | {_cell(p['load'])} |"
        )
    lines += [
        "",
        "| N | daemon start CPU s | daemon idle CPU s/min | CPU s/ticket floor | "
        "CPU s/ticket product | of which not idle | marginal CPU s/phase over floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, r in results.items():
        f, p = r["floor"], r["product"]
        busy = p["cpu_per_ticket_less_idle_s"]["median"] - f["cpu_per_ticket_s"]["median"]
        lines.append(
            f"| {n} | {_cell(p['daemon_start_cpu_s'])} | {_cell(p['idle_cpu_s_per_min'])} | "
            f"{_cell(f['cpu_per_ticket_s'], 2)} | {_cell(p['cpu_per_ticket_s'], 2)} | "
            f"{_cell(p['cpu_per_ticket_less_idle_s'], 2)} | {busy / PHASES_WITH_WORK:.2f} |"
        )
    lines.append("")
    for n, r in results.items():
        f, p = r["floor"]["wall_s"]["median"], r["product"]["wall_s"]["median"]
        created = r["product"]["created_to_end_s"]["median"]
        run = r["product"]["run_wall_s"]["median"] / r["floor"]["run_wall_s"]["median"]
        lines.append(
            f"N={n}: request→end / floor: {p / f:.2f}x; run created→end (no poll wait) / floor: "
            f"{created / f:.2f}x; run start→end / floor run: {run:.2f}x"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--n", default="1,4,16", help="ticket counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="samples per cell (median, spread)")
    parser.add_argument("--slots", type=int, default=4, help="ticket-run limit (dagster.yaml)")
    parser.add_argument(
        "--work",
        choices=("model", "cpu"),
        default="model",
        help="model: each phase burns MODEL_CPU_S and waits MODEL_WAIT_S, as a phase waiting on "
        "a model API does (the default); cpu: each phase burns --work-s CPU seconds",
    )
    parser.add_argument("--work-s", type=float, default=0.5, help="CPU seconds per phase (cpu)")
    parser.add_argument("--wait-s", type=float, help="seconds each phase waits (model)")
    parser.add_argument(
        "--sensor-s", type=int, help="request sensor interval; default: the intake sensors' own"
    )
    parser.add_argument(
        "--intake",
        choices=INTAKES,
        default="push",
        help="push: a signed Linear webhook per ticket to `veranda intake serve` (the default); "
        "poll: the request sensor at the intake's poll interval",
    )
    parser.add_argument("--keep", action="store_true", help="keep each DAGSTER_HOME")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.work == "model":
        work_s, wait_s = MODEL_CPU_S, MODEL_WAIT_S if args.wait_s is None else args.wait_s
    else:
        work_s, wait_s = args.work_s, 0.0
    print(f"phase work: {work_s} CPU-s then {wait_s} s waiting, x{PHASES_WITH_WORK} phases")
    print(f"intake: {args.intake}")
    print(f"cores: {os.cpu_count()}, load at start: {os.getloadavg()}")
    # a background run ignores SIGINT; SIGTERM must still reach the ``finally`` that drains
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    reaper = Reaper()
    try:
        ns = [int(x) for x in args.n.split(",")]
        results = measure(
            ns, args.repeat, args.slots, work_s, wait_s, args.sensor_s, args.keep, args.intake
        )
    finally:
        reaper.stop()
    print("\n" + render(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
