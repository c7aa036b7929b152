"""Peak memory and CPU of a context pack over a large clone: texts held (before) or streamed.

Issue 38: the pack held every text of the clone in memory (and a lowercased copy for search):
153 MiB peak on a sympy-sized tree. Now past ``MAX_HELD_TEXT_BYTES`` the texts are streamed one
file at a time for the full-text index and searched with ``git grep``. This runs, each in a
fresh child process (a child's ``ru_maxrss`` is its own, not the benchmark's), interleaved and
repeated:

* ``floor``: the child imports the pack's modules and opens the clone, packs nothing (the plain
  anchor: what any pack costs before it reads a file);
* ``held``: the pack with the cap lifted (the former behaviour: every text held);
* ``streamed``: the pack with the product's cap (``MAX_HELD_TEXT_BYTES``).

Reported per mode: median peak RSS (MiB; no ``tracemalloc``, which would slow the CPU column),
median wall and CPU seconds (the child's user+system plus its git processes'), and whether the
streamed pack equals the held one (files, windows, citations). The machine's load is printed.

    python benchmarks/pack_memory.py --repo /work/.mirror/wagtail+wagtail/repo --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_REPO = "/work/.mirror/wagtail+wagtail/repo"
"""A complete mirror with the most text at HEAD among the Python repositories here (40 MB in
5,300 files; sympy is not mirrored, and prefect's mirror, with more text, lacks a blob)."""
MODES = ("floor", "held", "streamed")
CHILD_TIMEOUT_S = 900.0
TICKET = (
    "Flow run retries ignore the task's timeout",
    "When a flow run is retried, `retry_delay_seconds` is applied but the task's "
    "`timeout_seconds` is not: the retried task runs without a timeout. See "
    "`propose_state` in the orchestration client and the `FlowRunContext`.",
)


def checkout(mirror: Path, dest: Path) -> Path:
    """A work-tree clone of ``mirror`` (local: objects hard-linked, not copied)."""
    subprocess.run(["git", "clone", "-q", str(mirror), str(dest)], check=True, timeout=1800)
    return dest


def child(mode: str, repo: Path, ticket: tuple[str, str], cap: int = 0) -> dict[str, object]:
    """One measurement, in this (fresh) process."""
    started, cpu0 = time.perf_counter(), time.process_time()
    from veranda_dagster.domain.clone import repo_corpus
    from veranda_dagster.domain.context.code_search import LocalGitGrep
    from veranda_dagster.domain.context.pack import _pack
    from veranda_dagster.domain.core.models import Ticket

    if mode == "held":
        repo_corpus.MAX_HELD_TEXT_BYTES = repo_corpus.MAX_CORPUS_BYTES
    elif cap:  # a tiny tree in the suite's run: streamed past a tiny cap
        repo_corpus.MAX_HELD_TEXT_BYTES = cap
    search = LocalGitGrep(repo)
    out: dict[str, object] = {"mode": mode}
    if mode != "floor":
        texts = list(ticket)
        pack, _ = _pack(texts, search, Ticket(id="B-1", source="linear", title=texts[0],
                                               description=texts[1]))  # fmt: skip
        out["text_mode"] = search.text_mode
        out["pack"] = json.loads(pack.model_dump_json(include={"files", "citations"}))
    else:
        search.paths()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["wall_s"] = time.perf_counter() - started
    out["cpu_s"] = time.process_time() - cpu0 + children.ru_utime + children.ru_stime
    out["rss_peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _run_child(mode: str, repo: Path, ticket: tuple[str, str], cap: int) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--clone", str(repo),
         "--ticket", json.dumps(list(ticket)), "--cap", str(cap)],
        capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} child failed: {proc.stderr[-2000:]}")
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure(
    repo: Path, repeat: int, ticket: tuple[str, str] = TICKET, cap: int = 0
) -> dict[str, object]:
    """Every mode ``repeat`` times, interleaved; medians and spreads per mode (``cap``: the
    streamed mode's cap instead of the product's, for a tiny tree)."""
    runs: dict[str, list[dict[str, object]]] = {m: [] for m in MODES}
    load_before = os.getloadavg()
    for _ in range(repeat):
        for mode in MODES:
            runs[mode].append(_run_child(mode, repo, ticket, cap))
    summary: dict[str, object] = {"repo": str(repo), "repeat": repeat, "load_before": load_before}
    for mode, rows in runs.items():
        cell: dict[str, object] = {}
        for key in ("rss_peak_mib", "wall_s", "cpu_s"):
            values = [float(r[key]) for r in rows]  # type: ignore[arg-type]
            cell[key] = round(statistics.median(values), 2)
            cell[f"{key}_range"] = [round(min(values), 2), round(max(values), 2)]
        if mode != "floor":
            cell["text_mode"] = rows[0]["text_mode"]
        summary[mode] = cell
    summary["same_pack"] = all(
        s["pack"] == h["pack"] for s, h in zip(runs["streamed"], runs["held"], strict=True)
    )
    summary["load_after"] = os.getloadavg()
    return summary


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repo", default=DEFAULT_REPO, help="a bare mirror to check out")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--clone", help=argparse.SUPPRESS)
    parser.add_argument("--ticket", help=argparse.SUPPRESS)
    parser.add_argument("--cap", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        title, body = json.loads(args.ticket)
        result = child(args.child, Path(args.clone), (title, body), args.cap)
        print(json.dumps(result))
        return result
    work = Path(tempfile.mkdtemp(prefix="pack-memory-"))
    try:
        clone = checkout(Path(args.repo), work / "clone")
        summary = measure(clone, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
