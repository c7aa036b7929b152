"""Does the repository's fix history point at the fixed file? Measured before it ranks anything.

Issue 35, step one of the version-history idea (AmaLgam, Wang & Lo 2014; BugLocator): files that
recent commits touched, and files that commits whose subject says fix/bug/regression touched,
should be where the next fix goes more often than their share of the tree. Two questions, on
the development splits only (a check split is refused, never read case by case):

1. **Against the tree**: how often is a fixed file among the files the last N non-merge commits
   before the base touched, against the share of the tree's source files they cover?
   Lift = hit rate / mean share.
2. **Against the pack's candidates** (``--candidates``): the ranking only chooses among the
   files the ticket already points at, so what matters is whether, among the first six files
   ``rank_files`` returns, a fixed file was touched more often than the others; and what a
   bonus for touched files does to which file comes first (gained / lost cases per project).

A commit by the fix's author less than ``SAME_WORK_SECONDS`` before the fix is left out: on a
branch merged without squashing, the base is the fix's own previous commit, which no ticket
has when it is filed.

Run::

    PYTHONPATH=$PWD python benchmarks/history_lift.py --repos-dir /work/.mirror \\
        --clones-dir /tmp/history-clones --candidates
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval as bench

DEPTHS: Final = (10, 30, 100, 300)
"""Commit counts measured; the largest bounds each case's one ``git log`` read."""

FIX_WORDS: Final = re.compile(
    r"\b(fix(e[sd])?|bugs?|regression|crash(es)?|broken|error)\b", re.IGNORECASE
)
"""A commit subject that says it repairs something: the literature's "fix" commits."""

SOURCE_SUFFIXES: Final = (".py", ".pyi")
"""The files a fixed file can be (the cases' gold files are Python): the share's denominator."""

DEV_SPLITS: Final = ("dev", "heldout")
"""The splits this may read case by case; the check splits are measured elsewhere, totals only."""

SAME_WORK_SECONDS: Final = 3 * 86400
"""A commit by the fix's author this close before the fix is taken as part of the same work."""

TOP: Final = 6
"""The pack's files: the candidates a history bonus may reorder."""

BONUS_WEIGHTS: Final = (0.1, 0.25, 0.5, 1.0)
"""Additive bonuses tried for a touched candidate (a file's score is about 1 to 5)."""


@dataclass
class Commit:
    author: str
    time: int
    subject: str
    files: list[str] = field(default_factory=list)


def git_text(git_dir: Path, *args: str) -> str:
    """Stdout of a git command; a mirror with an unreadable old tree ends the log early, and
    what was read before it still counts."""
    run = subprocess.run(["git", "-C", str(git_dir), *args], capture_output=True, check=False)
    return run.stdout.decode("utf-8", "replace")


def recent_commits(git_dir: Path, base: str, depth: int) -> list[Commit]:
    """The last ``depth`` non-merge commits up to ``base``, newest first."""
    out = git_text(
        git_dir, "log", "--no-merges", "--name-only", "--format=%x00%ae%x01%at%x01%s",
        "-n", str(depth), base,
    )  # fmt: skip
    commits = []
    for chunk in out.split("\0")[1:]:
        lines = [line for line in chunk.splitlines() if line.strip()]
        if not lines or lines[0].count("\x01") < 2:
            continue
        author, when, subject = lines[0].split("\x01", 2)
        commits.append(Commit(author, int(when), subject, lines[1:]))
    return commits


def touched(commits: list[Commit], depth: int, fix_only: bool, fix: Commit) -> set[str]:
    """Files the first ``depth`` commits touched, leaving out the fix's own earlier work."""
    return {
        path
        for c in commits[:depth]
        if not (c.author == fix.author and 0 <= fix.time - c.time < SAME_WORK_SECONDS)
        and (not fix_only or FIX_WORDS.search(c.subject))
        for path in c.files
    }


def fix_commit(git_dir: Path, sha: str) -> Commit:
    author, _, when = git_text(git_dir, "log", "-1", "--format=%ae%x01%at", sha).partition("\x01")
    return Commit(author.strip(), int(when.strip() or 0), "")


def top_candidates(clone: Path, case: dict[str, Any]) -> list[tuple[str, float]]:
    """The first files ``rank_files`` returns for the case's ticket, with their scores."""
    import veranda_dagster.domain.context.retrieval as retrieval_module
    from veranda_dagster.domain.context.pack import build_local_pack
    from veranda_dagster.domain.core.models import Ticket

    captured: list[tuple[str, float]] = []
    original = retrieval_module.rank_files

    def capture(*args: Any, **kwargs: Any) -> Any:
        ranked = original(*args, **kwargs)
        if not captured:
            captured.extend((ev.path, ev.score) for ev in ranked[:TOP])
        return ranked

    retrieval_module.rank_files = capture  # type: ignore[assignment]
    try:
        ticket = Ticket(
            id=case["id"], source="linear", title=case["title"], description=case["body"]
        )
        build_local_pack(clone, ticket, [])
    finally:
        retrieval_module.rank_files = original
    return captured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--clones-dir", type=Path, default=Path("/tmp/history-clones"))
    parser.add_argument(
        "--cases", type=Path, default=Path(__file__).parent / "data/retrieval_cases.json"
    )
    parser.add_argument("--candidates", action="store_true", help="also run the pack in process")
    args = parser.parse_args()
    cases = [c for c in json.loads(args.cases.read_text()) if c.get("split", "dev") in DEV_SPLITS]
    args.clones_dir.mkdir(parents=True, exist_ok=True)
    tree_stats: dict[tuple[int, bool], list[float]] = defaultdict(lambda: [0, 0.0, 0])
    cand_stats: dict[tuple[int, bool], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    moves: dict[tuple[int, bool, float], dict[str, list[int]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0])
    )
    for case in cases:
        git_dir = bench.find_git_dir(args.repos_dir, case["repo"])
        listing = git_text(git_dir, "ls-tree", "-r", "--name-only", case["base_sha"])
        source = {p for p in listing.splitlines() if p.endswith(SOURCE_SUFFIXES)}
        gold = set(case["gold_files"])
        commits = recent_commits(git_dir, case["base_sha"], max(DEPTHS))
        fix = fix_commit(git_dir, case["fix_sha"])
        ranked: list[tuple[str, float]] = []
        if args.candidates:
            clone = args.clones_dir / case["repo"].replace("/", "+")
            if not clone.exists():
                bench.git(git_dir, "clone", "--quiet", "--local", "--no-checkout", ".", str(clone))
            bench.git(clone, "update-ref", "--no-deref", "HEAD", case["base_sha"])
            ranked = top_candidates(clone, case)
        for depth in DEPTHS:
            for fix_only in (False, True):
                hist = touched(commits, depth, fix_only, fix)
                if source and gold & source:
                    s = tree_stats[(depth, fix_only)]
                    s[0] += bool(gold & hist)
                    s[1] += len(hist & source) / len(source)
                    s[2] += 1
                c = cand_stats[(depth, fix_only)]
                for path, _ in ranked:
                    i = 0 if path in gold else 2
                    c[i] += path in hist
                    c[i + 1] += 1
                if not ranked:
                    continue
                for weight in BONUS_WEIGHTS:
                    first = min(ranked, key=lambda e: (-(e[1] + weight * (e[0] in hist)), e[0]))
                    was, now = ranked[0][0] in gold, first[0] in gold
                    if was != now:
                        moves[(depth, fix_only, weight)][case["repo"]][0 if now else 1] += 1
        print(case["id"], file=sys.stderr, flush=True)
    print("against the tree: N commits, kind, hit rate, mean share of source files, lift")
    for (depth, fix_only), (hits, share, count) in sorted(tree_stats.items()):
        kind = "fix" if fix_only else "any"
        lift = hits / max(share, 1e-9)
        print(
            f"  {depth:<4} {kind}  {hits / count:.3f}  {share / count:.3f}  {lift:.2f}  (n={count})"
        )
    if not args.candidates:
        return
    print(f"among the first {TOP} candidates: share touched, fixed files vs others, lift")
    for (depth, fix_only), (gt, gn, ot, on) in sorted(cand_stats.items()):
        kind = "fix" if fix_only else "any"
        g, o = gt / max(gn, 1), ot / max(on, 1)
        print(
            f"  {depth:<4} {kind}  {g:.2f} ({gt}/{gn})  {o:.2f} ({ot}/{on})  {g / max(o, 1e-9):.2f}"
        )
    print("bonus to touched candidates: first file gained / lost (the projects that gain)")
    for (depth, fix_only, weight), per in sorted(moves.items()):
        gained = sum(v[0] for v in per.values())
        lost = sum(v[1] for v in per.values())
        winners = {r.split("/")[1]: v[0] for r, v in per.items() if v[0]}
        kind = "fix" if fix_only else "any"
        print(f"  {depth:<4} {kind} w={weight:<4}  +{gained} / -{lost}  {winners}")


if __name__ == "__main__":
    main()
