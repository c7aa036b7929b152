"""The 6-file context pack against BM25 and a naive seed count, side by side in one run.

Each case is a real bug report (issue title + body) with the commit that fixed it. At the fix's
parent every ranker names its files, and we count, overall and per project:

- ``recall@1`` / ``recall@6``: |gold ∩ first k files| / min(k, |gold|), averaged over cases;
- ``edit hit``: the share of cases where some window the ranker packed overlaps a base-side line
  the fix edits (``edit_lines``, from ``git diff -U0``); not reported for ``bm25_full``, whose
  whole files overlap every edit by construction;
- ``bytes``: mean window bytes packed; for ``ours`` also the wall time per pack (median, the
  whole ``veranda pack`` process; also its CPU seconds, user + system, with the git processes
  it ran, since wall time on a shared machine measures the neighbours too) and its peak
  resident memory (GNU ``time``'s ``%M``, which sees the pack alone).

Rankers:

- ``ours``: ``veranda pack --repo-dir WT --ticket TICKET.json --no-model``, the stable CLI;
- ``bm25_full``: ``rank_bm25.BM25Okapi`` over whole files, the query being the FULL ticket text
  (title and body), no budget: SWE-bench's BM25 setting (non-test ``.py`` files, document =
  path + contents), with identifier-aware tokens. Its top 6 whole files are "packed";
- ``bm25_budget``: the same ranking held to ``MAX_PACK_FILES`` files and ``MAX_PACK_BYTES``:
  each file pays for ``SEARCH_WINDOW_LINES``-line windows around the lines that carry the most
  query words (at most ``MAX_WINDOWS_PER_FILE``); a file whose first window no longer fits is
  skipped, later windows that do not fit are dropped;
- ``naive``: files ranked by how many of the pack's own seeds they contain (ties: more matching
  lines, then path), windows around the matching lines, same budget.

Cases carry a ``split``. The development splits (``DEVELOPMENT_SPLITS``: ``dev``, ``heldout``
once it had been looked at, and ``dev2``, a second set of single-file fixes) are printed case by
case; the check splits (``heldout2``, ``heldout3``) never are, in any run: only their split
totals are shown, so nobody reads their misses before the ranking is settled. With more than
one split in a run every total is per split, never pooled.

Beside the pack's CPU the run times the floor: ``git grep -F -i`` of the pack's own seeds on
the same tree (``grep_cpu_s``), and reports the median of the per-case ratio (``cpu/grep``).

Run::

    python benchmarks/retrieval.py --repos-dir /work/bench_repos [--split dev] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded from its file by the tests
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu_meter import measure

from veranda_dagster.domain.core.bounds import (
    MAX_PACK_BYTES,
    MAX_PACK_FILES,
    MAX_WINDOWS_PER_FILE,
    SEARCH_WINDOW_LINES,
)

HERE = Path(__file__).resolve().parent
DEFAULT_CASES = HERE / "data" / "retrieval_cases.json"
RANKERS = ("ours", "bm25_full", "bm25_budget", "naive")
ANCHOR = "bm25_full"
DEV_SPLIT = "dev"
"""The default split of a case: the first set the ranking was developed on."""
DEVELOPMENT_SPLITS: Final = (DEV_SPLIT, "heldout", "dev2")
"""Splits whose cases may be read one by one (named in the progress line, rows in the JSON,
per-project totals). Every other split is a check set: its cases feed its split totals only."""
MAX_FILE_BYTES = 1_000_000
"""Larger files (vendored data, generated tables) are left out of the BM25 corpus."""
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_test\.py|conftest\.py)$")


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
class Span:
    start: int
    end: int
    text: str


@dataclass
class Packed:
    files: list[str] = field(default_factory=list)
    bytes: int = 0
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


def windows_for(lines: list[str], hit_lines: list[int]) -> list[Span]:
    """``SEARCH_WINDOW_LINES``-line windows around 1-based hit lines, in hit order, a hit inside
    an earlier window adding none; at most ``MAX_WINDOWS_PER_FILE``. No hit: the file head."""
    if not lines:
        return []
    half = SEARCH_WINDOW_LINES // 2
    spans: list[Span] = []
    for hit in hit_lines or [1]:
        start = max(1, hit - half + 1)
        end = min(len(lines), start + SEARCH_WINDOW_LINES - 1)
        if any(s.start <= hit <= s.end for s in spans):
            continue
        spans.append(Span(start, end, "".join(lines[start - 1 : end])))
        if len(spans) == MAX_WINDOWS_PER_FILE:
            break
    return spans


def pack_ranked(ranked: list[str], windows: dict[str, list[Span]]) -> Packed:
    """Take files in rank order under the same file and byte ceilings the pack has."""
    out = Packed()
    for path in ranked:
        if len(out.files) == MAX_PACK_FILES:
            break
        taken: list[tuple[int, int]] = []
        for span in windows.get(path, []):
            size = len(span.text.encode("utf-8"))
            if out.bytes + size > MAX_PACK_BYTES:
                break
            out.bytes += size
            taken.append((span.start, span.end))
        if taken:
            out.files.append(path)
            out.spans[path] = taken
    return out


def whole_files(ranked: list[str], lines: dict[str, list[str]]) -> Packed:
    """The unbudgeted anchor: its first ``MAX_PACK_FILES`` whole files."""
    out = Packed()
    for path in ranked[:MAX_PACK_FILES]:
        out.files.append(path)
        out.spans[path] = [(1, max(1, len(lines[path])))]
        out.bytes += sum(len(line.encode("utf-8")) for line in lines[path])
    return out


# --- the baselines ---------------------------------------------------------------------------


class Tree:
    """The base commit's tracked text files, read from the object store (a partial clone may
    lack a few large blobs; those are skipped), and ``git grep`` over them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        listing = git(root, "ls-tree", "-r", "-l", "-z", "HEAD").stdout.decode(errors="replace")
        wanted: list[tuple[str, str]] = []
        for entry in filter(None, listing.split("\0")):
            meta, _, path = entry.partition("\t")
            fields = meta.split()
            if len(fields) != 4 or fields[1] != "blob" or fields[0] == "120000":
                continue
            if fields[3].isdigit() and int(fields[3]) <= MAX_FILE_BYTES:
                wanted.append((fields[2], path))
        feed = "".join(f"{blob}\n" for blob, _ in wanted).encode()
        proc = subprocess.run(
            ["git", "-C", str(root), "cat-file", "--batch"], input=feed, capture_output=True
        )
        out, cursor = proc.stdout, 0
        self.lines: dict[str, list[str]] = {}
        for _, path in wanted:
            end = out.index(b"\n", cursor)
            header = out[cursor:end].split()
            if len(header) != 3:  # missing from a partial clone
                cursor = end + 1
                continue
            size = int(header[2])
            data = out[end + 1 : end + 1 + size]
            cursor = end + 2 + size
            if b"\0" not in data[:8192]:
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

    def sources(self) -> list[str]:
        """SWE-bench's BM25 corpus: the non-test ``.py`` files."""
        return sorted(p for p in self.lines if p.endswith(".py") and not _TEST_PATH.search(p))


def seed_hits(tree: Tree, seeds: list[str]) -> dict[str, dict[str, list[int]]]:
    return {seed: tree.grep(seed) for seed in seeds}


@dataclass
class Floor:
    """What the pack's searches cost at the least: one ``git grep -F -i`` per seed of the pack,
    on the same tree, in the same run. Its CPU (user + system of the git processes) is the floor
    the pack's own CPU is compared with."""

    hits: dict[str, dict[str, list[int]]]
    seconds: float
    cpu_seconds: float


def timed_seed_hits(tree: Tree, seeds: list[str]) -> Floor:
    """``seed_hits`` with its wall time and the CPU of the ``git grep`` children it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    hits = seed_hits(tree, seeds)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Floor(hits, seconds, cpu)


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


def rank_bm25(tree: Tree, query: list[str]) -> list[str]:
    """BM25 over the whole source files (path + contents), best first; zero scores left out."""
    from rank_bm25 import BM25Okapi  # dev dependency, imported where it is used

    paths = tree.sources()
    if not paths or not query:
        return []
    index = BM25Okapi([words(p + "\n" + "".join(tree.lines[p])) or ["\0"] for p in paths])
    scores = index.get_scores(query)
    ranked = sorted(zip(scores, paths, strict=True), key=lambda x: (-x[0], x[1]))
    return [p for score, p in ranked if score > 0]


def query_lines(lines: list[str], query: set[str]) -> list[int]:
    """The lines carrying the most distinct query words, best first (ties: earlier line)."""
    scored = []
    for number, line in enumerate(lines, 1):
        found = len(query.intersection(words(line)))
        if found:
            scored.append((-found, number))
    return [n for _, n in sorted(scored)[: MAX_WINDOWS_PER_FILE * 4]]


# --- our pack --------------------------------------------------------------------------------


@dataclass
class PackRun:
    result: dict[str, Any]
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    cpu_method: str = "cgroup"
    """``cgroup``: every process the pack started is counted, its sandboxed git included;
    ``rusage``: this machine let no control group be made, and the sandboxed git processes
    (their own pid namespace) are missing from the figure (``cpu_meter.py``)."""


def run_pack(pack_cmd: list[str], worktree: Path, case: dict[str, Any], tmp: Path) -> PackRun:
    """One ``veranda pack`` process, measured by ``cpu_meter.measure``: its CPU with every
    process it starts (the git commands run in bubblewrap's own pid namespace, whose CPU plain
    ``wait`` accounting never sees) and its own peak resident memory (GNU ``time``'s ``%M``:
    a forked child inherits the parent's high-water mark, so ``wait4`` would report the
    benchmark's own footprint)."""
    ticket = {"id": case["id"], "source": "linear", "title": case["title"]}
    ticket["description"] = case["body"]
    ticket_file = tmp / "ticket.json"
    ticket_file.write_text(json.dumps(ticket), encoding="utf-8")
    argv = [*pack_cmd, "pack", "--repo-dir", str(worktree), "--ticket", str(ticket_file)]
    out_file = tmp / "pack.out"
    if shutil.which(pack_cmd[0]) is None:
        raise BenchmarkError(f"the pack CLI {pack_cmd[0]!r} is not installed")
    try:
        with out_file.open("wb") as out:
            measured = measure([*argv, "--no-model"], stdout=out)
    except FileNotFoundError:
        raise BenchmarkError(f"the pack CLI {pack_cmd[0]!r} is not installed") from None
    except RuntimeError as exc:
        raise BenchmarkError(f"pack failed on {case['id']}: {exc}") from None
    try:
        result = json.loads(out_file.read_text(encoding="utf-8"))
        [f["path"] for f in result["files"]], list(result["seeds"])
    except (ValueError, KeyError, TypeError) as exc:
        raise BenchmarkError(f"pack output for {case['id']} breaks the contract: {exc}") from None
    return PackRun(
        result, measured.seconds, measured.cpu_seconds, measured.peak_rss_mb, measured.method
    )


def resolve_pack_cmd(pack_cmd: str | list[str] | None) -> list[str]:
    if isinstance(pack_cmd, list):
        return pack_cmd
    if pack_cmd:
        return pack_cmd.split()
    if shutil.which("veranda"):
        return ["veranda"]
    raise BenchmarkError("the `veranda` CLI is not on PATH (pip install -e .), or pass --pack-cmd")


def ours_packed(result: dict[str, Any]) -> Packed:
    out = Packed(bytes=int(result["bytes"]))
    for f in result["files"]:
        out.files.append(f["path"])
        out.spans[f["path"]] = [(int(w["start"]), int(w["end"])) for w in f["windows"]]
    return out


# --- metrics ---------------------------------------------------------------------------------


def recall_at(files: list[str], gold: list[str], k: int) -> float:
    return len(set(files[:k]) & set(gold)) / min(k, len(gold))


def edit_hit(packed: Packed, edits: dict[str, list[list[int]]]) -> bool:
    """Some packed window overlaps a base-side line the fix edits."""
    for path, ranges in edits.items():
        for start, end in packed.spans.get(path, []):
            if any(start <= e_end and e_start <= end for e_start, e_end in ranges):
                return True
    return False


def run_case(case: dict[str, Any], repo_dir: Path, pack_cmd: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="veranda-bench-") as tmp_name:
        tmp = Path(tmp_name)
        worktree = tmp / "wt"
        # A whole clone (objects hard-linked), not a ``git worktree``: the product runs git on a
        # clone in its sandbox, which shows the clone alone, never a git directory elsewhere.
        git(repo_dir, "clone", "--quiet", "--local", "--no-checkout", ".", str(worktree))
        git(worktree, "update-ref", "--no-deref", "HEAD", case["base_sha"])
        try:
            ours = run_pack(pack_cmd, worktree, case, tmp)
            seeds = list(ours.result["seeds"])
            tree = Tree(worktree)
            floor = timed_seed_hits(tree, seeds)
            hits = floor.hits
            query = words(f"{case['title']}\n{case['body']}")
            ranked = rank_bm25(tree, query)
            query_set = set(query)
            bm25_windows = {
                p: windows_for(tree.lines[p], query_lines(tree.lines[p], query_set))
                for p in ranked[: MAX_PACK_FILES * 4]
            }
            packs = {
                "ours": ours_packed(ours.result),
                "bm25_full": whole_files(ranked, tree.lines),
                "bm25_budget": pack_ranked(ranked, bm25_windows),
                "naive": pack_ranked(
                    rank_naive(hits),
                    {p: windows_for(tree.lines[p], hit_lines(hits, p)) for p in tree.lines},
                ),
            }
        finally:
            shutil.rmtree(worktree, ignore_errors=True)
    edits = case.get("edit_lines") or {}
    row: dict[str, Any] = {"id": case["id"], "repo": case["repo"], "seeds": seeds}
    row.update(report_source=case.get("report_source", "issue"), gold=case["gold_files"])
    row.update(split=case.get("split", DEV_SPLIT))
    row.update(seconds=round(ours.seconds, 3), cpu_seconds=round(ours.cpu_seconds, 3))
    row.update(cpu_method=ours.cpu_method)
    row.update(peak_rss_mb=round(ours.peak_rss_mb, 1))
    row.update(grep_s=round(floor.seconds, 3), grep_cpu_s=round(floor.cpu_seconds, 3))
    for name, packed in packs.items():
        row[name] = {
            "r1": recall_at(packed.files, case["gold_files"], 1),
            "r6": recall_at(packed.files, case["gold_files"], MAX_PACK_FILES),
            "edit_hit": edit_hit(packed, edits) if edits and name != ANCHOR else None,
            "files": packed.files,
            "bytes": packed.bytes,
        }
    return row


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"cases": len(rows)}
    for name in RANKERS:
        edits = [r[name]["edit_hit"] for r in rows if r[name]["edit_hit"] is not None]
        out[name] = {
            "recall_at_1": _mean([r[name]["r1"] for r in rows]),
            "recall_at_6": _mean([r[name]["r6"] for r in rows]),
            "edit_hit": _mean([float(e) for e in edits]) if edits else None,
            "bytes": round(_mean([r[name]["bytes"] for r in rows])),
        }
    seconds = [r["seconds"] for r in rows]
    out["ours"]["median_s"] = round(statistics.median(seconds), 3) if seconds else 0.0
    cpu = [r["cpu_seconds"] for r in rows]
    out["ours"]["median_cpu_s"] = round(statistics.median(cpu), 3) if cpu else 0.0
    out["ours"]["peak_rss_mb"] = max((r["peak_rss_mb"] for r in rows), default=0.0)
    grep_cpu = [r.get("grep_cpu_s", 0.0) for r in rows]
    out["grep_floor"] = {
        "median_s": round(statistics.median([r.get("grep_s", 0.0) for r in rows] or [0.0]), 3),
        "median_cpu_s": round(statistics.median(grep_cpu or [0.0]), 3),
    }
    ratios = [r["cpu_seconds"] / g for r, g in zip(rows, grep_cpu, strict=True) if g > 0]
    out["ours"]["median_cpu_over_grep"] = round(statistics.median(ratios), 2) if ratios else None
    anchor = out[ANCHOR]["recall_at_6"]
    out["ours_minus_bm25_full"] = round(out["ours"]["recall_at_6"] - anchor, 3)
    out["ours_wins_r6"] = sum(1 for r in rows if r["ours"]["r6"] > r[ANCHOR]["r6"])
    out["ours_loses_r6"] = sum(1 for r in rows if r["ours"]["r6"] < r[ANCHOR]["r6"])
    return out


def render(
    rows: list[dict[str, Any]], groups: dict[str, dict[str, Any]], per_case: bool = True
) -> str:
    """The per-case table, then the totals; ``per_case=False`` prints the totals alone."""
    head = " ".join(f"{n:>11}" for n in RANKERS)
    lines = [f"{'case':<22} {'gold':>4} {head}   (recall@6 / edit hit)  secs"]
    if not per_case:
        lines, rows = [], []
    for r in rows:
        cells = " ".join(
            f"{r[n]['r6']:>6.2f}/{'-' if r[n]['edit_hit'] is None else int(r[n]['edit_hit']):>4}"
            for n in RANKERS
        )
        lines.append(f"{r['id']:<22} {len(r['gold']):>4} {cells}  {r['seconds']:.2f}")
    if lines:
        lines.append("")
    lines.append(
        f"{'group':<28} {'n':>4}  "
        + "  ".join(f"{n + ' r1/r6/edit/KB':>26}" for n in RANKERS)
        + "  median_s  cpu_s  peak_MB  grep_cpu_s  cpu/grep"
    )
    for label, t in groups.items():
        cells = "  ".join(
            f"{t[n]['recall_at_1']:>6.3f}/{t[n]['recall_at_6']:.3f}/"
            f"{'  -  ' if t[n]['edit_hit'] is None else format(t[n]['edit_hit'], '.3f')}"
            f"/{t[n]['bytes'] / 1000:>5.1f}"
            for n in RANKERS
        )
        lines.append(
            f"{label:<28} {t['cases']:>4}  {cells}  {t['ours']['median_s']:>8.3f}"
            f"  {t['ours']['median_cpu_s']:>5.2f}  {t['ours']['peak_rss_mb']:>7.1f}"
            f"  {t['grep_floor']['median_cpu_s']:>10.3f}"
            f"  {t['ours']['median_cpu_over_grep'] or 0:>8.2f}"
        )
    return "\n".join(lines)


def run(
    cases: list[dict[str, Any]],
    repos_dir: Path,
    pack_cmd: str | list[str] | None = None,
    per_case: bool = True,
) -> dict[str, Any]:
    """Every case through every ranker. ``per_case=False`` keeps each case out of sight (the
    progress line names no case, the result holds only totals), so a held-out set can be
    measured without being read case by case, which is how tuning to it starts. A check
    split's cases are kept out of sight even with ``per_case`` (``DEVELOPMENT_SPLITS``)."""
    if not cases:
        raise BenchmarkError("no cases to run")
    command = resolve_pack_cmd(pack_cmd)
    dirs = check_cases(cases, repos_dir)
    rows = []
    for number, case in enumerate(cases, 1):
        named = f" {case['id']}" if per_case and readable(case) else ""
        print(f"[{number}/{len(cases)}]{named}", file=sys.stderr, flush=True)
        rows.append(run_case(case, dirs[case["repo"]], command))
    result: dict[str, Any] = {"budget": {"files": MAX_PACK_FILES, "bytes": MAX_PACK_BYTES}}
    if per_case:
        result["rows"] = [r for r in rows if readable(r)]
    result["totals"] = group_totals(rows, per_project=per_case)
    return result


def readable(case_or_row: dict[str, Any]) -> bool:
    """A case of a development split, which may be read one by one."""
    return case_or_row.get("split", DEV_SPLIT) in DEVELOPMENT_SPLITS


def group_totals(
    rows: list[dict[str, Any]], *, per_project: bool = True
) -> dict[str, dict[str, Any]]:
    """Totals per split first (a held-out split is never pooled with the development one), then
    per project and report source over the development splits' rows (only with
    ``per_project``: a check split, and under ``--totals-only`` any split, shows nothing finer
    than its split), then the multi-file fixes of each split."""
    splits = sorted({r.get("split", DEV_SPLIT) for r in rows}, key=lambda s: (s != DEV_SPLIT, s))
    in_split = {s: [r for r in rows if r.get("split", DEV_SPLIT) == s] for s in splits}
    groups = {"all": totals(rows)} if len(splits) == 1 else {}
    if len(splits) > 1:
        groups.update({f"split:{s}": totals(in_split[s]) for s in splits})
    readable_rows = [r for r in rows if readable(r)] if per_project else []
    for repo in sorted({r["repo"] for r in readable_rows}):
        groups[repo] = totals([r for r in readable_rows if r["repo"] == repo])
    for source in sorted({r["report_source"] for r in readable_rows}):
        groups[f"source:{source}"] = totals(
            [r for r in readable_rows if r["report_source"] == source]
        )
    for split in splits:
        multi = [r for r in in_split[split] if len(r["gold"]) > 1]
        if multi:
            label = "gold files > 1" if len(splits) == 1 else f"split:{split} gold files > 1"
            groups[label] = totals(multi)
    return groups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos-dir", type=Path, required=True, help="clones, one per repo")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--case", action="append", default=[], help="run only this id")
    parser.add_argument("--repo", action="append", default=[], help="run only this owner/name")
    parser.add_argument("--split", action="append", default=[], help="run only this split")
    parser.add_argument("--pack-cmd", help="the veranda command (default: veranda on PATH)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows and totals as JSON")
    parser.add_argument(
        "--totals-only",
        action="store_true",
        help="print and write only totals, never a case (for measuring a held-out set)",
    )
    args = parser.parse_args(argv)
    try:
        cases = json.loads(args.cases.read_text(encoding="utf-8"))
        if args.case:
            cases = [c for c in cases if c["id"] in set(args.case)]
        if args.repo:
            cases = [c for c in cases if c["repo"] in set(args.repo)]
        if args.split:
            cases = [c for c in cases if c.get("split", DEV_SPLIT) in set(args.split)]
        result = run(cases, args.repos_dir, args.pack_cmd, per_case=not args.totals_only)
    except (OSError, ValueError) as exc:
        print(f"retrieval benchmark: error: cannot read {args.cases}: {exc}", file=sys.stderr)
        return 2
    except BenchmarkError as exc:
        print(f"retrieval benchmark: error: {exc}", file=sys.stderr)
        return 2
    print(render(result.get("rows", []), result["totals"], per_case=not args.totals_only))
    if args.json:
        text = json.dumps(result, indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
