"""The pack's CPU beside two ``git grep -F -i`` floors of the same seeds on the same tree.

``retrieval.py`` reports the floor over the object store of a no-checkout clone (how it holds
its trees), where git inflates every blob once per seed. A person timing ``git grep`` would do it
in a checked-out tree, which is faster on a large repository, so this script measures both for a
few cases, in one run: the ``veranda pack`` process (CPU with its git children, peak memory, as
``retrieval.py`` measures it), then one ``git grep -n -F -i -I`` per pack seed over ``HEAD``,
then the same over the tree's text files written to disk (``git grep --no-index``). Run::

    python benchmarks/grep_floor.py --repos-dir /work/.mirror --case prefect-22393 --case ...
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _grep_cpu(argv_for: list[list[str]]) -> float:
    """CPU seconds of the ``git grep`` processes, run one after another."""
    before = _children_cpu()
    for argv in argv_for:
        subprocess.run(argv, capture_output=True, check=False)
    return _children_cpu() - before


def measure(case: dict, repo_dir: Path, pack_cmd: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix="veranda-floor-") as tmp_name:
        tmp = Path(tmp_name)
        clone = tmp / "wt"
        git(repo_dir, "clone", "--quiet", "--local", "--no-checkout", ".", str(clone))
        git(clone, "update-ref", "--no-deref", "HEAD", case["base_sha"])
        pack = run_pack(pack_cmd, clone, case, tmp)
        seeds = list(pack.result["seeds"])
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
    return {
        "id": case["id"],
        "python_files": python_files,
        "seeds": len(seeds),
        "pack_cpu_s": round(pack.cpu_seconds, 3),
        "pack_peak_mb": round(pack.peak_rss_mb, 1),
        "grep_objects_cpu_s": round(objects, 3),
        "grep_worktree_cpu_s": round(checked_out, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--case", action="append", required=True, help="case id (repeat)")
    parser.add_argument("--pack-cmd", help="the veranda command (default: veranda on PATH)")
    args = parser.parse_args(argv)
    cases = {c["id"]: c for c in json.loads(args.cases.read_text(encoding="utf-8"))}
    try:
        command = resolve_pack_cmd(args.pack_cmd)
        for case_id in args.case:
            if case_id not in cases:
                raise BenchmarkError(f"no case {case_id!r} in {args.cases}")
            case = cases[case_id]
            row = measure(case, find_git_dir(args.repos_dir, case["repo"]), command)
            ratio = row["pack_cpu_s"] / max(row["grep_worktree_cpu_s"], 1e-3)
            print(json.dumps(row | {"pack_over_worktree_grep": round(ratio, 2)}))
    except BenchmarkError as exc:
        print(f"grep floor: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
