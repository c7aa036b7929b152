"""The pack's CPU beside two ``git grep -F -i`` floors of the same seeds on the same tree.

``retrieval.py`` reports the floor over the object store of a no-checkout clone (how it holds
its trees), where git inflates every blob once per seed. A person timing ``git grep`` would do it
in a checked-out tree, which is faster on a large repository, so this script measures both for a
few cases, in one run: the ``veranda pack`` process (CPU with every process it starts, the
sandboxed git ones included, and its peak memory: ``cpu_meter.py``), then one
``git grep -n -F -i -I`` per pack seed over ``HEAD``, then the same over the tree's text files
written to disk (``git grep --no-index``). Run::

    python benchmarks/grep_floor.py --repos-dir /work/.mirror --case prefect-22393 --case ...

``--compare LABEL=COMMAND`` (repeatable) times several pack commands on the same clones instead
of one (say the code before and after a change: ``before='env PYTHONPATH=/tmp/old veranda'``),
``--repeats`` times, alternating them in each round, and reports each one's median CPU and
whether all of them printed the same pack.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval import (
    DEFAULT_CASES,
    BenchmarkError,
    Tree,
    find_git_dir,
    git,
    resolve_pack_cmd,
    run_pack,
)

MAX_REPEATS = 20
"""Rounds of ``--repeats``: enough for a median, not a soak."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _grep_cpu(argv_for: list[list[str]]) -> float:
    """CPU seconds of the ``git grep`` processes (plain, unsandboxed: rusage sees them), run one
    after another."""
    before = _children_cpu()
    for argv in argv_for:
        subprocess.run(argv, capture_output=True, check=False)
    return _children_cpu() - before


def _pack_only(result: dict[str, Any]) -> str:
    return json.dumps(result, sort_keys=True)


def measure(
    case: dict, repo_dir: Path, packs: dict[str, list[str]], repeats: int = 1
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="veranda-floor-") as tmp_name:
        tmp = Path(tmp_name)
        clone = tmp / "wt"
        git(repo_dir, "clone", "--quiet", "--local", "--no-checkout", ".", str(clone))
        git(clone, "update-ref", "--no-deref", "HEAD", case["base_sha"])
        runs: dict[str, list[Any]] = {label: [] for label in packs}
        for _ in range(max(1, min(repeats, MAX_REPEATS))):
            for label, command in packs.items():  # alternating: the load hits every one alike
                runs[label].append(run_pack(command, clone, case, tmp))
        first = runs[next(iter(packs))][0]
        seeds = list(first.result["seeds"])
        objects = _grep_cpu(
            [
                ["git", "-C", str(clone), "grep", "-n", "-F", "-i", "-I", "-e", s, "HEAD"]
                for s in seeds
            ]
        )
        tree = Tree(clone)
        files = tmp / "files"
        for path, lines in tree.lines.items():
            target = files / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("".join(lines), encoding="utf-8")
        checked_out = _grep_cpu(
            [
                ["git", "-C", str(files), "grep", "--no-index", "-n", "-F", "-i", "-I", "-e", s]
                for s in seeds
            ]
        )
        shutil.rmtree(files, ignore_errors=True)
    python_files = sum(1 for p in tree.lines if p.endswith(".py"))
    row: dict[str, Any] = {
        "id": case["id"],
        "python_files": python_files,
        "seeds": len(seeds),
        "grep_objects_cpu_s": round(objects, 3),
        "grep_worktree_cpu_s": round(checked_out, 3),
    }
    floor = max(checked_out, 1e-3)
    outputs = {_pack_only(run.result) for label_runs in runs.values() for run in label_runs}
    for label, label_runs in runs.items():
        cpu = statistics.median(run.cpu_seconds for run in label_runs)
        prefix = "pack" if len(packs) == 1 else f"{label}"
        row[f"{prefix}_cpu_s"] = round(cpu, 3)
        row[f"{prefix}_cpu_runs"] = [round(run.cpu_seconds, 3) for run in label_runs]
        row[f"{prefix}_peak_mb"] = round(max(run.peak_rss_mb for run in label_runs), 1)
        row[f"{prefix}_wall_s"] = round(statistics.median(run.seconds for run in label_runs), 3)
        row[f"{prefix}_over_worktree_grep"] = round(cpu / floor, 2)
    row["cpu_method"] = first.cpu_method
    row["same_pack"] = len(outputs) == 1
    return row


def _compare(specs: list[str]) -> dict[str, list[str]]:
    packs: dict[str, list[str]] = {}
    for spec in specs:
        label, sep, command = spec.partition("=")
        if not sep or not label.isidentifier() or not command.strip():
            raise BenchmarkError(f"--compare {spec!r}: expected LABEL=COMMAND")
        packs[label] = command.split()
    return packs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--case", action="append", required=True, help="case id (repeat)")
    parser.add_argument("--pack-cmd", help="the veranda command (default: veranda on PATH)")
    parser.add_argument("--compare", action="append", default=[], help="LABEL=COMMAND (repeat)")
    parser.add_argument("--repeats", type=int, default=1, help=f"rounds, at most {MAX_REPEATS}")
    args = parser.parse_args(argv)
    cases = {c["id"]: c for c in json.loads(args.cases.read_text(encoding="utf-8"))}
    try:
        packs = _compare(args.compare) or {"pack": resolve_pack_cmd(args.pack_cmd)}
        for case_id in args.case:
            if case_id not in cases:
                raise BenchmarkError(f"no case {case_id!r} in {args.cases}")
            case = cases[case_id]
            repo_dir = find_git_dir(args.repos_dir, case["repo"])
            print(json.dumps(measure(case, repo_dir, packs, args.repeats)), flush=True)
    except BenchmarkError as exc:
        print(f"grep floor: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
