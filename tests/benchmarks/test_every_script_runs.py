"""Every benchmark script is imported and run on a tiny input here, so none can rot unseen.

The orchestration table once could not be reproduced: ``orchestration_defs.py`` stopped
importing when ``PipelineResource`` gained required resources, and no test imported it. The
first test below fails for any ``benchmarks/*.py`` no test loads; the others run each script's
real entry point (or, for the daemon benchmark, its code location in process and once through
``dagster-daemon``) on inputs small enough for the main suite.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from tests.benchmarks.scripts import ROOT, git, load_script

SCRIPTS_IMPORTED_AS_PACKAGE = {"orchestration_defs", "proc_cpu"}
"""Loaded as ``benchmarks.<name>`` (the daemon's code location and ``orchestration.py`` import
them so), not through ``load_script``."""


def _tested_scripts() -> set[str]:
    texts = "".join(p.read_text() for p in (ROOT / "tests" / "benchmarks").glob("test_*.py"))
    loaded = set(re.findall(r'load_script\("(\w+)"\)', texts))
    imported = set(re.findall(r"benchmarks\.(\w+)", texts))
    return loaded | (imported & SCRIPTS_IMPORTED_AS_PACKAGE)


def test_every_benchmark_script_is_loaded_by_a_test() -> None:
    scripts = {p.stem for p in (ROOT / "benchmarks").glob("*.py")}
    assert scripts - _tested_scripts() == set()


# --- orchestration ----------------------------------------------------------------------------


@pytest.fixture()
def bench_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VERANDA_BENCH_DIR", str(tmp_path / "bench"))
    monkeypatch.syspath_prepend(str(ROOT))
    return tmp_path / "bench"


def test_the_benchmark_code_location_runs_a_ticket_in_process(bench_dir: Path) -> None:
    import benchmarks.orchestration_defs as bench_defs

    defs = bench_defs.build()  # what the daemon's code server loads
    job = defs.resolve_job_def("ticket_run")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tickets", ["BENCH-1"])
        result = job.execute_in_process(partition_key="BENCH-1", instance=instance)
    assert result.success
    calls = (bench_dir / "calls" / "calls.log").read_text().split()
    assert (
        len(calls) == bench_defs.PHASES_WITH_WORK if hasattr(bench_defs, "PHASES_WITH_WORK") else 9
    )
    sensors = {s.name: s.minimum_interval_seconds for s in defs.sensors or []}
    assert set(sensors) == {"bench_requests", "pr_feedback", "ticket_run_failures"}


def test_the_request_sensor_asks_once_per_requested_ticket(bench_dir: Path) -> None:
    import benchmarks.orchestration_defs as bench_defs

    bench_dir.mkdir(parents=True, exist_ok=True)  # importing the defs may have made it
    (bench_dir / "requests.txt").write_text("BENCH-1\nBENCH-2\n")
    with dg.instance_for_test() as instance:
        first = bench_defs.bench_requests(dg.build_sensor_context(instance=instance))
        assert isinstance(first, dg.SensorResult) and first.run_requests is not None
        assert [r.partition_key for r in first.run_requests] == ["BENCH-1", "BENCH-2"]
        again = bench_defs.bench_requests(
            dg.build_sensor_context(instance=instance, cursor=first.cursor)
        )
        assert isinstance(again, dg.SensorResult) and again.run_requests == []


def test_the_request_sensor_polls_at_the_intake_interval_unless_told(
    bench_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.orchestration_defs import sensor_interval_s
    from veranda_dagster.sources.linear.limits import LINEAR_POLL_INTERVAL_S

    monkeypatch.delenv("VERANDA_BENCH_SENSOR_S", raising=False)
    assert sensor_interval_s() == LINEAR_POLL_INTERVAL_S
    monkeypatch.setenv("VERANDA_BENCH_SENSOR_S", "2")
    assert sensor_interval_s() == 2


def test_floor_spread_and_table() -> None:
    orchestration = load_script("orchestration")
    sample = orchestration.floor(2, 2, 0.02, 0.0)
    assert sample["wall_s"] > 0 and sample["cpu_per_ticket_s"] >= 9 * 0.02 * 0.8
    stats = orchestration.spread([{"x": 1.0}, {"x": 5.0}, {"x": 2.0}])
    assert stats == {"x": {"median": 2.0, "min": 1.0, "max": 5.0}}
    cell = {"median": 1.0, "min": 1.0, "max": 1.0}
    floor_cell = {k: cell for k in ("wall_s", "run_wall_s", "cpu_per_ticket_s", "load")}
    product = {
        k: cell
        for k in (
            "wall_s",
            "created_to_end_s",
            "run_wall_s",
            "before_start_s",
            "daemon_start_cpu_s",
            "idle_cpu_s_per_min",
            "cpu_per_ticket_s",
            "cpu_per_ticket_less_idle_s",
            "load",
        )
    }
    table = orchestration.render({"1": {"floor": floor_cell, "product": product}})
    assert "| 1 | 1.0 (1.0-1.0) |" in table and "request→end / floor: 1.00x" in table
    assert "run created→end (no poll wait) / floor: 1.00x" in table


BURN = """
import pathlib, sys, time
end = time.process_time() + 0.4
while time.process_time() < end:
    pass
pathlib.Path(sys.argv[1]).touch()
time.sleep(60)
"""
ORPHANING_PARENT = """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", *sys.argv[1:]], start_new_session=True)
"""
BURN_DONE_TIMEOUT_S = 60.0
"""Bound on the grandchild's 0.4 CPU-s on a loaded machine."""
PROC_CPU_CHILD = """
import os, subprocess, sys, time
sys.path.insert(0, {root!r})
from benchmarks.proc_cpu import Reaper, children_cpu, descendants, drain, tree_cpu
reaper = Reaper()
# a child that starts a grandchild in its own session and exits without waiting for it
subprocess.run([sys.executable, "-c", {parent!r}, {burn!r}, {marker!r}], check=True)
deadline = time.monotonic() + {timeout!r}
while not os.path.exists({marker!r}) and time.monotonic() < deadline:
    time.sleep(0.05)
live = tree_cpu()
drain(5.0)
reaper.stop()
print(live, children_cpu(), len(descendants()))
"""


def test_proc_cpu_counts_an_orphaned_grandchild_live_and_after_drain(tmp_path: Path) -> None:
    """What the old CPU column missed: a process whose parent never waited for it."""
    script = PROC_CPU_CHILD.format(
        root=str(ROOT),
        parent=ORPHANING_PARENT,
        burn=BURN,
        marker=str(tmp_path / "burnt"),
        timeout=BURN_DONE_TIMEOUT_S,
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    live, reaped, left = (float(x) for x in out.stdout.split())
    assert left == 0  # drained: nothing of the tree is left running
    assert live >= 0.35  # read from /proc while the grandchild still lives
    assert reaped >= 0.35  # and in RUSAGE_CHILDREN once drained and reaped


PUSH_TO_CREATED_BOUND_S = 10.0
"""The pushed ticket's run is created this soon after its POST (about 0.3 s measured at load 9;
loose for a loaded 2-core machine, still far below a poll interval)."""


@pytest.mark.slow
@pytest.mark.parametrize("intake", ["push", "poll"])
def test_orchestration_runs_one_ticket_through_the_daemon(tmp_path: Path, intake: str) -> None:
    """push: a signed webhook to a real ``veranda intake serve`` process beside the daemon;
    poll: the request sensor (here every second)."""
    out_json = tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = ["--n", "1", "--repeat", "1", "--wait-s", "0", "--sensor-s", "1", "--intake", intake]
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "orchestration.py"), *argv,
         "--work", "model", "--json", str(out_json)],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    cell = json.loads(out_json.read_text())["1"]
    product = cell["product"]
    assert product["wall_s"]["median"] >= product["run_wall_s"]["median"] > 0
    # the phases' own work (9 x MODEL_CPU_S) is inside the product's CPU per ticket
    assert product["cpu_per_ticket_s"]["median"] >= cell["floor"]["cpu_per_ticket_s"]["median"]
    assert "request→end / floor" in proc.stdout
    if intake == "push":  # the run existed well before a poll could have made it
        assert product["sensor_s"]["median"] < PUSH_TO_CREATED_BOUND_S


# --- the other scripts --------------------------------------------------------------------------


def test_text_bounds_runs_small_against_head(capsys: pytest.CaptureFixture[str]) -> None:
    text_bounds = load_script("text_bounds")
    assert text_bounds.main(["--size", "40", "--big", "80", "--before", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "at 40 characters" in out
    assert {"seeds", "citations", "scrub", "review_reply"} <= {
        line.split()[0] for line in out.splitlines()[2:]
    }
    # it lifts the cap on its own copies only: the modules the product imports keep theirs
    from veranda_dagster.domain.context import seeds
    from veranda_dagster.domain.core import bounds
    from veranda_dagster.domain.deliver import citations

    cap = bounds.MAX_EXTRACT_TEXT_CHARS
    assert [vars(m)["MAX_EXTRACT_TEXT_CHARS"] for m in (seeds, citations)] == [cap, cap]


def test_repo_detection_runs_on_its_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--totals-only`` prints and writes split totals alone: no org row, no case."""
    repo_detection = load_script("repo_detection")
    out = tmp_path / "rd.json"
    assert repo_detection.main(["--totals-only", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["table"] and not data["real"]["cases"] and not data["real"]["elsewhere"]
    assert set(data["real"]["groups"]) == {"all"} | {
        f"split:{c['split']}" for c in repo_detection.load_cases()
    }
    real_rows = printed.split("Real tickets:")[1].splitlines()[3:]
    assert real_rows and all(row.startswith(("| split:", "| all /")) for row in real_rows)


def test_repo_detection_never_shows_a_hidden_splits_org_or_case() -> None:
    repo_detection = load_script("repo_detection")
    hidden = next(iter(repo_detection.HIDDEN_SPLITS))
    real = {
        "groups": {"acme": {}, "checkorg": {}, "split:dev": {}, f"split:{hidden}": {}, "all": {}},
        "cases": [
            {"id": "a-1", "org": "acme", "split": "dev"},
            {"id": "c-1", "org": "checkorg", "split": hidden},
        ],
    }
    assert repo_detection.shown_orgs(real, totals_only=False) == ["acme"]
    assert repo_detection.shown_orgs(real, totals_only=True) == []
    assert repo_detection.shown_ids(real) == {"a-1"}


def test_repo_gate_strictness_reads_no_hidden_split_and_restores_the_gate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    strictness = load_script("repo_gate_strictness")
    rules = strictness.rules
    before = {name: getattr(rules, name) for name in strictness.SCALED}
    cases = strictness.development_cases()
    assert cases and not {c["split"] for c in cases} & strictness.bench.HIDDEN_SPLITS
    assert strictness.main(["--factors", "1", "3"]) == 0
    assert {name: getattr(rules, name) for name in strictness.SCALED} == before
    printed = capsys.readouterr().out
    proceeds = [int(n) for n in re.findall(r"all: .* of (\d+) proceeds", printed)]
    assert len(proceeds) == 2 and proceeds[1] < proceeds[0]  # a stricter gate proceeds less


def test_build_vocabulary_reads_a_snapshot_into_a_copied_catalog(tmp_path: Path) -> None:
    build_vocabulary = load_script("build_vocabulary")
    work = tmp_path / "src"
    work.mkdir()
    (work / "pyproject.toml").write_text(
        '[project]\nname = "fizzbuzz-kit"\n[project.scripts]\nfizz = "fizzbuzz_kit.cli:main"\n'
    )
    (work / "fizzbuzz_kit").mkdir()
    (work / "fizzbuzz_kit" / "__init__.py").write_text("")
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "init")
    mirrors = tmp_path / "mirrors"
    (mirrors / "acme+fizz").mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(work), str(mirrors / "acme+fizz" / "repo"))
    catalogs = tmp_path / "catalogs"
    catalogs.mkdir()
    catalog = {"org": "acme", "repositories": [{"full_name": "acme/fizz"}, {"full_name": "acme/x"}]}
    (catalogs / "acme.json").write_text(json.dumps(catalog))
    assert (
        build_vocabulary.main(["--mirrors", str(mirrors), "--catalogs", str(catalogs), "acme"]) == 0
    )
    repos = json.loads((catalogs / "acme.json").read_text())["repositories"]
    vocabulary = repos[0]["vocabulary"]
    assert "fizzbuzz-kit" in vocabulary["distributions"] and "fizz" in vocabulary["commands"]
    assert "vocabulary" not in repos[1]  # no snapshot: left empty


def _snapshot(tmp_path: Path, mirrors: Path, full_name: str, distribution: str) -> None:
    """A bare snapshot of a repository whose ``pyproject.toml`` publishes ``distribution``."""
    work = tmp_path / f"src-{mirrors.name}-{full_name.replace('/', '+')}"
    work.mkdir()
    (work / "pyproject.toml").write_text(f'[project]\nname = "{distribution}"\n')
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "init")
    target = mirrors / full_name.replace("/", "+") / "repo"
    target.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(work), str(target))


def test_build_vocabulary_reads_the_first_mirror_that_holds_a_repository(tmp_path: Path) -> None:
    """A whole snapshot beside a sparse one of the same repository wins; a repository only the
    second directory holds is read from it; one neither holds stays empty."""
    build_vocabulary = load_script("build_vocabulary")
    whole, sparse = tmp_path / "whole", tmp_path / "sparse"
    _snapshot(tmp_path, whole, "acme/fizz", "fizz-whole")
    _snapshot(tmp_path, sparse, "acme/fizz", "fizz-sparse")
    _snapshot(tmp_path, sparse, "acme/buzz", "buzz-sparse")
    catalogs = tmp_path / "catalogs"
    catalogs.mkdir()
    names = ["acme/fizz", "acme/buzz", "acme/x"]
    catalog = {"org": "acme", "repositories": [{"full_name": n} for n in names]}
    (catalogs / "acme.json").write_text(json.dumps(catalog))
    argv = ["--mirrors", str(whole), "--mirrors", str(sparse), "--catalogs", str(catalogs), "acme"]
    assert build_vocabulary.main(argv) == 0
    repos = json.loads((catalogs / "acme.json").read_text())["repositories"]
    assert repos[0]["vocabulary"]["distributions"] == ["fizz-whole"]
    assert repos[1]["vocabulary"]["distributions"] == ["buzz-sparse"]
    assert "vocabulary" not in repos[2]


def test_sensor_tick_times_the_product_sensors_on_a_small_instance(tmp_path: Path) -> None:
    sensor_tick = load_script("sensor_tick")
    out = tmp_path / "ticks.json"
    assert sensor_tick.main(["--n", "15", "--repeat", "2", "--json", str(out)]) == 0
    cell = json.loads(out.read_text())["15"]
    for tick in ("intake_ms", "pr_feedback_cold_ms", "pr_feedback_warm_ms", "sweep_prs_ms"):
        assert 0 < cell[tick]["min"] <= cell[tick]["median"] <= cell[tick]["max"]


def test_run_execution_counts_a_runs_orchestration_by_cause() -> None:
    run_execution = load_script("run_execution")
    result = run_execution.measure(2)
    per_run = result["per_run"]
    assert per_run["cpu_s"]["median"] > 0 and result["import_dagster_cpu_s"] >= 0
    assert per_run["events"]["median"] == sum(result["events_by_type"].values()) > 0
    assert result["events_by_type"]["STEP_SUCCESS"] == 13  # nine phases and four checks
    assert per_run["dynamic_partition_lookups"]["median"] > 0
    # the shipped VerandaInstance asks the storage about the run's ticket once
    assert per_run["dynamic_partition_queries"]["median"] == 1
    assert per_run["twin_checks"]["median"] == 1  # asked at the run's first phase only
    assert "twin_checks: 1.000" in run_execution.render(result)
    with pytest.raises(ValueError, match="--runs"):
        run_execution.measure(run_execution.MAX_RUNS + 1)
