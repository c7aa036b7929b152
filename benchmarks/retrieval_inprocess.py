"""The pack on the development sets in this process, scored by ``retrieval.py``'s own metrics,
with every case's ranked candidates captured as feature vectors (``pack_ranker.features``) and
the factor ``promote_imported`` then multiplied each one's score by.

Why in process: quality does not depend on load, and the ranking's inputs can be captured on
the way for ``fit_pack_ranker.py`` (``rank_files`` and ``promote_imported`` are wrapped, and
``gather`` is always given the title, so the title's share is captured whatever the weights;
nothing else changes). Each case runs on its repository's no-checkout clone (``--clones``) at
the case's base commit, through ``build_local_pack`` as ``veranda pack`` would. Only the ``dev``
and ``heldout`` splits are ever read: the check sets are measured with ``retrieval.py
--totals-only`` and nothing else.

``--weights FILE`` ranks with other weights: a JSON object of feature -> weight (every case),
or ``{"by_repo": {owner/name: {feature: weight}}}`` (each case with its repository's entry:
the leave-one-project-out weights ``fit_pack_ranker.py --lopo-out`` writes).

Run::

    python benchmarks/retrieval_inprocess.py --repos-dir /work/.mirror --rows rows.json \\
        [--features features.json] [--weights weights.json] [--case ID ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval as bench

from veranda_dagster.domain.context import pack_ranker
from veranda_dagster.domain.context import retrieval as ranking
from veranda_dagster.domain.context.pack import build_local_pack
from veranda_dagster.domain.context.pack_windows import FileEvidence
from veranda_dagster.domain.core.models import Ticket

DEV_SPLITS = ("dev", "heldout")
"""The only splits this script reads."""
MAX_CAPTURED = 100
"""Candidates captured per case, best first by the ranking in force: a file below this never
reaches the six, and the fit compares the gold file with the ones it had to beat."""


def _load(path: Path | None) -> tuple[Mapping[str, float] | None, dict[str, Mapping[str, float]]]:
    if path is None:
        return None, {}
    data = json.loads(path.read_text())
    if "by_repo" in data:
        return None, dict(data["by_repo"])
    return dict(data), {}


def _ratio(after: float | None, before: float) -> float:
    """How much ``promote_imported`` multiplied a file's score (1.0 when it did not)."""
    return after / before if after is not None and before > 0 else 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--cases", type=Path, default=bench.DEFAULT_CASES)
    parser.add_argument("--clones", type=Path, default=Path("/tmp/rank5-clones"))
    parser.add_argument("--rows", type=Path, required=True, help="per-case rows (JSON)")
    parser.add_argument("--features", type=Path, help="captured candidates (JSON)")
    parser.add_argument("--weights", type=Path)
    parser.add_argument("--case", action="append", default=[])
    args = parser.parse_args(argv)
    every, by_repo = _load(args.weights)
    cases = [c for c in json.loads(args.cases.read_text()) if c.get("split", "dev") in DEV_SPLITS]
    if args.case:
        cases = [c for c in cases if c["id"] in set(args.case)]
    args.clones.mkdir(parents=True, exist_ok=True)
    original = ranking.rank_files
    original_gather = ranking.gather
    original_promote = ranking.promote_imported
    captured: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for case in cases:
        weights = by_repo.get(case["repo"], every)
        lists: list[list[FileEvidence]] = []
        before: dict[str, float] = {}
        promoted: dict[str, float] = {}

        def capture(
            results: Any,
            signals: Any,
            file_text: Any,
            _w: Any = weights,
            _l: Any = lists,
            _b: Any = before,
        ) -> list[FileEvidence]:
            ranked = original(results, signals, file_text, _w)
            _l.append(ranked)
            _b.update((ev.path, ev.score) for ev in ranked)
            return ranked

        def promote(
            ranked: list[FileEvidence], search: Any, max_files: int, _p: Any = promoted
        ) -> list[FileEvidence]:
            out = original_promote(ranked, search, max_files)
            _p.update((ev.path, ev.score) for ev in out)
            return out

        def gather(text: str, search: Any, most: int, _: Any = None, _t: Any = case) -> Any:
            return original_gather(text, search, most, _t["title"])

        ranking.rank_files = capture
        ranking.gather = gather
        ranking.promote_imported = promote
        source = bench.find_git_dir(args.repos_dir, case["repo"])
        clone = args.clones / case["repo"].replace("/", "+")
        if not clone.exists():
            bench.git(source, "clone", "--quiet", "--local", "--no-checkout", ".", str(clone))
        bench.git(clone, "update-ref", "--no-deref", "HEAD", case["base_sha"])
        ticket = Ticket(
            id=case["id"], source="linear", title=case["title"], description=case["body"]
        )
        started = time.process_time()
        result = build_local_pack(clone, ticket, [])
        cpu = time.process_time() - started
        packed = bench.ours_packed(result)
        gold, edits = case["gold_files"], case.get("edit_lines") or {}
        rows.append(
            {
                "id": case["id"],
                "repo": case["repo"],
                "split": case.get("split", "dev"),
                "r1": bench.recall_at(packed.files, gold, 1),
                "r6": bench.recall_at(packed.files, gold, 6),
                "edit_hit": bench.edit_hit(packed, edits) if edits else None,
                "bytes": packed.bytes,
                "files": packed.files,
                "cpu": round(cpu, 3),
            }
        )
        if lists:
            captured.append(
                {
                    "id": case["id"],
                    "repo": case["repo"],
                    "split": case.get("split", "dev"),
                    "gold": gold,
                    "candidates": [
                        {
                            "path": ev.path,
                            "score": before[ev.path],
                            "x": pack_ranker.features(ev),
                            "promotion": _ratio(promoted.get(ev.path), before[ev.path]),
                        }
                        for ev in lists[-1][:MAX_CAPTURED]
                    ],
                }
            )
        print(case["id"], rows[-1]["r1"], rows[-1]["edit_hit"], file=sys.stderr, flush=True)
    ranking.rank_files = original
    ranking.gather = original_gather
    ranking.promote_imported = original_promote
    args.rows.write_text(json.dumps(rows, indent=1))
    if args.features:
        args.features.write_text(json.dumps(captured))
    for split in DEV_SPLITS:
        part = [r for r in rows if r["split"] == split]
        if part:
            edits_known = [r for r in part if r["edit_hit"] is not None]
            hit = sum(bool(r["edit_hit"]) for r in edits_known) / max(1, len(edits_known))
            print(
                f"{split} {len(part)} r1 {sum(r['r1'] for r in part) / len(part):.3f}"
                f" r6 {sum(r['r6'] for r in part) / len(part):.3f}"
                f" edit {hit:.3f}"
                f" cpu-median {sorted(r['cpu'] for r in part)[len(part) // 2]:.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
