"""Measure repository detection over the labelled ticket table.

A wrong-repo ``proceed`` is the worst outcome (a tested PR against the wrong service), so the
headline number is the precision of ``proceed``; the ask rate is its price. Run:

    python benchmarks/repo_detection.py [tests/fixtures/repo_detection/tickets.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from veranda_dagster.domain.catalog import load_catalog
from veranda_dagster.domain.models import Ticket
from veranda_dagster.domain.repo_detection import detect_repo

DEFAULT_TABLE = Path(__file__).resolve().parent.parent / (
    "tests/fixtures/repo_detection/tickets.json"
)


def row_mismatches(expect: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Fields where the guess differs from the row's expectation (candidates as a set)."""
    wrong = []
    for key, want in expect.items():
        have = got.get(key)
        if key == "candidates":
            if set(want) != set(have or []):
                wrong.append(f"candidates {sorted(have or [])} != {sorted(want)}")
        elif have != want:
            wrong.append(f"{key} {have!r} != {want!r}")
    return wrong


def evaluate(table: Path = DEFAULT_TABLE) -> dict[str, Any]:
    data = json.loads(table.read_text(encoding="utf-8"))
    catalog = load_catalog(table.parent / data["catalog"])
    results = []
    for row in data["rows"]:
        guess = detect_repo(Ticket.model_validate(row["ticket"]), catalog)
        got = guess.model_dump(include={"repo", "decision", "signal", "candidates", "confidence"})
        results.append(
            {
                "name": row["name"],
                "got": got,
                "wrong": row_mismatches(row["expect"], got),
                "expect": row["expect"],
            }
        )
    proceeds = [r for r in results if r["got"]["decision"] == "proceed"]
    correct = [
        r
        for r in proceeds
        if r["expect"]["decision"] == "proceed" and r["expect"].get("repo") == r["got"]["repo"]
    ]
    expected_proceeds = sum(1 for r in results if r["expect"]["decision"] == "proceed")
    asks = len(results) - len(proceeds)
    return {
        "rows": len(results),
        "proceed": len(proceeds),
        "proceed_precision": (len(correct) / len(proceeds)) if proceeds else 1.0,
        "proceed_recall": (len(correct) / expected_proceeds) if expected_proceeds else 1.0,
        "ask_rate": asks / len(results),
        "row_accuracy": sum(1 for r in results if not r["wrong"]) / len(results),
        "mismatches": {r["name"]: r["wrong"] for r in results if r["wrong"]},
    }


def main(argv: list[str]) -> int:
    table = Path(argv[0]) if argv else DEFAULT_TABLE
    report = evaluate(table)
    print(
        f"rows={report['rows']} proceed={report['proceed']} "
        f"proceed_precision={report['proceed_precision']:.3f} "
        f"proceed_recall={report['proceed_recall']:.3f} ask_rate={report['ask_rate']:.3f} "
        f"row_accuracy={report['row_accuracy']:.3f}"
    )
    for name, wrong in report["mismatches"].items():
        print(f"  MISMATCH {name}: {'; '.join(wrong)}")
    return 0 if report["proceed_precision"] == 1.0 and not report["mismatches"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
