"""File-level recall of the 6-file context pack against two baselines, side by side in one run.

Each case is a real bug report (issue title + body) with the commit that fixed it. At the fix's
parent we ask three rankers for at most ``MAX_PACK_FILES`` files within ``MAX_PACK_BYTES`` and
count how many of the fix's non-test ``.py`` files (the gold set) made it in:

- ``ours``: ``veranda pack --repo-dir WT --ticket TICKET.json --no-model``, the stable CLI;
- ``naive``: files ranked by how many distinct seeds they contain (ties: more matching lines,
  then path);
- ``bm25``: ``rank_bm25.BM25Okapi`` over every tracked text file, the query being the same seeds
  split into identifier words.

Equal footing: both baselines get exactly the seeds the pack printed, search the same tree
(``git grep -F -i`` at HEAD of the same worktree) and pay for files with the same currency —
``SEARCH_WINDOW_LINES``-line windows around matching lines, at most ``MAX_WINDOWS_PER_FILE`` per
file, merged where they overlap; a file with no matching line (possible only for BM25, which
also scores word parts) pays for its first window, the file head. Files are taken in rank order;
a file whose first window no longer fits is skipped, later windows that do not fit are dropped.
Run::

    python benchmarks/retrieval.py --repos-dir /work/bench_repos [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veranda_dagster.domain.bounds import (
    MAX_PACK_BYTES,
    MAX_PACK_FILES,
    MAX_WINDOWS_PER_FILE,
    SEARCH_WINDOW_LINES,
)

HERE = Path(__file__).resolve().parent
DEFAULT_CASES = HERE / "data" / "retrieval_cases.json"
RANKERS = ("ours", "naive", "bm25")
TEXT_BM25 = "bm25_text"
"""Opt-in, informational: BM25 with the whole report as the query (not the same seeds), to show
what the seed cap leaves out. Not one of the headline columns."""
MAX_FILE_BYTES = 1_000_000
"""Larger tracked files (vendored data, lock files) are left out of the BM25 corpus."""
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")


class BenchmarkError(Exception):
    """A repository, commit, case file or the pack CLI is missing: nothing is measured."""


# --- repositories ----------------------------------------------------------------------------


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if check and proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        raise BenchmarkError(f"git {' '.join(args)} failed in {repo}: {err}")
    return proc


def find_git_dir(repos_dir: Path, repo: str) -> Path:
    """The clone of ``owner/name`` under ``repos_dir`` (``owner+name``, ``name``, ...)."""
    owner, name = repo.split("/", 1)
    for path in (
        repos_dir / f"{owner}+{name}" / "repo",
        repos_dir / f"{owner}+{name}",
        repos_dir / f"{owner}+{name}.git",
        repos_dir / owner / name,
        repos_dir / name,
    ):
        if path.is_dir() and git(path, "rev-parse", "--git-dir", check=False).returncode == 0:
            return path
    raise BenchmarkError(f"repository {repo} is not under {repos_dir}: fetch and clone it first")


def check_cases(cases: list[dict[str, Any]], repos_dir: Path) -> dict[str, Path]:
    """Every repo and base commit must be present before anything runs; name all that are not."""
    dirs: dict[str, Path] = {}
    missing: list[str] = []
    for case in cases:
        try:
            repo_dir = dirs.get(case["repo"]) or find_git_dir(repos_dir, case["repo"])
        except BenchmarkError as exc:
            missing.append(str(exc))
            continue
        dirs[case["repo"]] = repo_dir
        probe = git(repo_dir, "cat-file", "-e", f"{case['base_sha']}^{{commit}}", check=False)
        if probe.returncode != 0:
            missing.append(f"case {case['id']}: commit {case['base_sha']} not in {repo_dir}")
    if missing:
        raise BenchmarkError("; ".join(sorted(set(missing))))
    return dirs


# --- the shared byte budget ------------------------------------------------------------------


@dataclass
class Packed:
    files: list[str] = field(default_factory=list)
    bytes: int = 0


def windows_for(lines: list[str], hit_lines: list[int]) -> list[str]:
    """Merged ``SEARCH_WINDOW_LINES``-line windows around 1-based hit lines, in hit order."""
    if not lines:
        return []
    half = SEARCH_WINDOW_LINES // 2
    spans: list[tuple[int, int]] = []
    for hit in hit_lines or [1]:
        start = max(1, hit - half + 1)
        end = min(len(lines), start + SEARCH_WINDOW_LINES - 1)
        if any(s <= hit <= e for s, e in spans):
            continue
        spans.append((start, end))
        if len(spans) == MAX_WINDOWS_PER_FILE:
            break
    return ["".join(lines[s - 1 : e]) for s, e in spans]


def pack_ranked(ranked: list[str], window_texts: dict[str, list[str]]) -> Packed:
    """Take files in rank order under the same file and byte ceilings the pack has."""
    out = Packed()
    for path in ranked:
        if len(out.files) == MAX_PACK_FILES:
            break
        taken = False
        for text in window_texts.get(path, []):
            size = len(text.encode("utf-8"))
            if out.bytes + size > MAX_PACK_BYTES:
                break
            out.bytes += size
            taken = True
        if taken:
            out.files.append(path)
    return out


# --- the baselines ---------------------------------------------------------------------------


class Tree:
    """The worktree's tracked text files and ``git grep`` over them, read once per case."""

    def __init__(self, root: Path) -> None:
        self.root = root
        listing = git(root, "ls-files", "-z").stdout.decode(errors="replace")
        self.lines: dict[str, list[str]] = {}
        for path in filter(None, listing.split("\0")):
            file = root / path
            if not file.is_file() or file.stat().st_size > MAX_FILE_BYTES:
                continue
            data = file.read_bytes()
            if b"\0" in data[:8192]:
                continue
            self.lines[path] = data.decode("utf-8", errors="replace").splitlines(keepends=True)

    def grep(self, seed: str) -> dict[str, list[int]]:
        """Line numbers per file where ``seed`` occurs (fixed string, case-insensitive)."""
        proc = git(self.root, "grep", "-n", "-F", "-i", "-I", "-e", seed, "HEAD", check=False)
        hits: dict[str, list[int]] = {}
        for raw in proc.stdout.decode(errors="replace").splitlines():
            _, path, line, _ = [*raw.split(":", 3), "", "", ""][:4]
            if line.isdigit():
                hits.setdefault(path, []).append(int(line))
        return hits


def seed_hits(tree: Tree, seeds: list[str]) -> dict[str, dict[str, list[int]]]:
    return {seed: tree.grep(seed) for seed in seeds}


def hit_lines(hits: dict[str, dict[str, list[int]]], path: str) -> list[int]:
    return sorted({n for per_file in hits.values() for n in per_file.get(path, [])})


def rank_naive(hits: dict[str, dict[str, list[int]]]) -> list[str]:
    distinct: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    for per_file in hits.values():
        for path, found in per_file.items():
            distinct[path] += 1
            lines[path] += len(found)
    return sorted(distinct, key=lambda p: (-distinct[p], -lines[p], p))


def words(text: str) -> list[str]:
    """Identifier-aware tokens: ``NetRCAuth.__init__`` → netrcauth, net, rc, auth, init."""
    out: list[str] = []
    for token in re.findall(r"[A-Za-z0-9_]+", text):
        parts = [p.lower() for p in _WORD.findall(token)]
        out.append(token.lower().strip("_"))
        out.extend(p for p in parts if p != out[-1])
    return [w for w in out if len(w) > 1]


def rank_bm25(tree: Tree, queries: list[list[str]]) -> list[list[str]]:
    """One BM25 index over the tree, one ranking per query (files scoring 0 are left out)."""
    from rank_bm25 import BM25Okapi  # dev dependency, imported where it is used

    paths = sorted(tree.lines)
    if not paths:
        return [[] for _ in queries]
    index = BM25Okapi([words("".join(tree.lines[p])) or ["\0"] for p in paths])
    rankings = []
    for query in queries:
        scores = index.get_scores(query) if query else [0.0] * len(paths)
        ranked = sorted(zip(scores, paths, strict=True), key=lambda x: (-x[0], x[1]))
        rankings.append([p for score, p in ranked if score > 0])
    return rankings


# --- our pack --------------------------------------------------------------------------------


def run_pack(pack_cmd: list[str], worktree: Path, case: dict[str, Any], tmp: Path) -> dict:
    ticket = {"id": case["id"], "source": "linear", "title": case["title"]}
    ticket["description"] = case["body"]
    ticket_file = tmp / "ticket.json"
    ticket_file.write_text(json.dumps(ticket), encoding="utf-8")
    argv = [*pack_cmd, "pack", "--repo-dir", str(worktree), "--ticket", str(ticket_file)]
    try:
        proc = subprocess.run([*argv, "--no-model"], capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        raise BenchmarkError(f"the pack CLI {pack_cmd[0]!r} is not installed") from None
    if proc.returncode != 0:
        err = proc.stderr.strip() or proc.stdout.strip()
        raise BenchmarkError(f"`{' '.join(argv)}` failed on {case['id']}: {err}")
    try:
        result = json.loads(proc.stdout)
        [f["path"] for f in result["files"]], list(result["seeds"])
    except (ValueError, KeyError, TypeError) as exc:
        raise BenchmarkError(f"pack output for {case['id']} breaks the contract: {exc}") from None
    return result


def resolve_pack_cmd(pack_cmd: str | list[str] | None) -> list[str]:
    if isinstance(pack_cmd, list):
        return pack_cmd
    if pack_cmd:
        return pack_cmd.split()
    if shutil.which("veranda"):
        return ["veranda"]
    raise BenchmarkError("the `veranda` CLI is not on PATH (pip install -e .), or pass --pack-cmd")


# --- one case, all cases ---------------------------------------------------------------------


def recall(files: list[str], gold: list[str]) -> float:
    return len(set(files) & set(gold)) / len(gold)


def run_case(
    case: dict[str, Any], repo_dir: Path, pack_cmd: list[str], text_bm25: bool = False
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="veranda-bench-") as tmp_name:
        tmp = Path(tmp_name)
        worktree = tmp / "wt"
        git(repo_dir, "worktree", "add", "--detach", "--force", str(worktree), case["base_sha"])
        try:
            ours = run_pack(pack_cmd, worktree, case, tmp)
            seeds = list(ours["seeds"])
            tree = Tree(worktree)
            hits = seed_hits(tree, seeds)
            texts = {p: windows_for(tree.lines[p], hit_lines(hits, p)) for p in tree.lines}
            queries = [words(" ".join(seeds))]
            if text_bm25:
                queries.append(words(f"{case['title']}\n{case['body']}"))
            bm25 = rank_bm25(tree, queries)
            packs = {
                "ours": Packed([f["path"] for f in ours["files"]], int(ours["bytes"])),
                "naive": pack_ranked(rank_naive(hits), texts),
                "bm25": pack_ranked(bm25[0], texts),
            }
            if text_bm25:
                packs[TEXT_BM25] = pack_ranked(bm25[1], texts)
        finally:
            git(repo_dir, "worktree", "remove", "--force", str(worktree), check=False)
            git(repo_dir, "worktree", "prune", check=False)
    row: dict[str, Any] = {"id": case["id"], "repo": case["repo"], "seeds": seeds}
    row.update(report_source=case.get("report_source", "issue"), gold=case["gold_files"])
    for name, packed in packs.items():
        row[name] = {"recall": recall(packed.files, case["gold_files"]), "files": packed.files}
        row[name]["bytes"] = packed.bytes
    return row


def columns(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    return (*RANKERS, TEXT_BM25) if rows and TEXT_BM25 in rows[0] else RANKERS


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"cases": len(rows)}
    for name in columns(rows):
        vals = [r[name]["recall"] for r in rows]
        out[name] = {
            "recall_at_6": round(sum(vals) / len(vals), 4) if vals else 0.0,
            "any_gold_hit": sum(1 for r in rows if r[name]["recall"] > 0),
            "wins": sum(
                1
                for r in rows
                if name in RANKERS
                and r[name]["recall"] > max(r[o]["recall"] for o in RANKERS if o != name)
            ),
        }
    for base in ("naive", "bm25"):
        denom = out[base]["recall_at_6"]
        out[f"ours_over_{base}"] = round(out["ours"]["recall_at_6"] / denom, 3) if denom else None
    return out


def render(rows: list[dict[str, Any]], groups: dict[str, dict[str, Any]]) -> str:
    names = columns(rows)
    header = " ".join(f"{n:>9}" for n in names)
    lines = [f"{'case':<14} {'gold':>4} {header}  seeds"]
    for r in rows:
        cells = " ".join(f"{r[n]['recall']:>9.2f}" for n in names)
        lines.append(f"{r['id']:<14} {len(r['gold']):>4} {cells}  {', '.join(r['seeds'])[:60]}")
    for label, t in groups.items():
        cells = " ".join(f"{t[n]['recall_at_6']:>9.3f}" for n in names)
        lines.append(f"{'TOTAL ' + label:<19} {cells}  (n={t['cases']}, recall@6)")
        hits = "  ".join(f"{n}={t[n]['any_gold_hit']}/{t['cases']}" for n in names)
        ratio = f"ours/naive={t['ours_over_naive']}  ours/bm25={t['ours_over_bm25']}"
        lines.append(f"{'':<19} any gold file: {hits}  {ratio}")
    return "\n".join(lines)


def run(
    cases: list[dict[str, Any]],
    repos_dir: Path,
    pack_cmd: str | list[str] | None = None,
    text_bm25: bool = False,
) -> dict[str, Any]:
    if not cases:
        raise BenchmarkError("no cases to run")
    command = resolve_pack_cmd(pack_cmd)
    dirs = check_cases(cases, repos_dir)
    rows = []
    for number, case in enumerate(cases, 1):
        print(f"[{number}/{len(cases)}] {case['id']}", file=sys.stderr, flush=True)
        rows.append(run_case(case, dirs[case["repo"]], command, text_bm25))
    groups = {"all": totals(rows)}
    for source in sorted({r["report_source"] for r in rows}):
        groups[source] = totals([r for r in rows if r["report_source"] == source])
    return {
        "budget": {"files": MAX_PACK_FILES, "bytes": MAX_PACK_BYTES},
        "rows": rows,
        "totals": groups,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos-dir", type=Path, required=True, help="clones, one per repo")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--case", action="append", default=[], help="run only this id")
    parser.add_argument("--pack-cmd", help="the veranda command (default: veranda on PATH)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows and totals as JSON")
    parser.add_argument(
        "--with-text-bm25",
        action="store_true",
        help="add an informational column: BM25 with the whole report as the query",
    )
    args = parser.parse_args(argv)
    try:
        cases = json.loads(args.cases.read_text(encoding="utf-8"))
        if args.case:
            cases = [c for c in cases if c["id"] in set(args.case)]
        result = run(cases, args.repos_dir, args.pack_cmd, args.with_text_bm25)
    except (OSError, ValueError) as exc:
        print(f"retrieval benchmark: error: cannot read {args.cases}: {exc}", file=sys.stderr)
        return 2
    except BenchmarkError as exc:
        print(f"retrieval benchmark: error: {exc}", file=sys.stderr)
        return 2
    print(render(result["rows"], result["totals"]))
    if args.json:
        text = json.dumps(result, indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
