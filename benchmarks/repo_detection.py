"""Measure repository detection: the new weighed-evidence rules beside the rules as they stood
before (a frozen copy, ``baselines/repo_rules_v1.py``), in one process, on two sets:

* the in-repo table (``tests/fixtures/repo_detection/tickets.json``), written beside the rules;
* real GitHub issues from five organisations (``data/repo_detection/real_tickets.json``), each
  with the catalog of its organisation (``data/repo_detection/catalogs/``). The gold of a
  ``proceed`` ticket is the repository it was filed in; ``ask`` tickets are hand-labelled as
  ones a person could not decide from the text; ``elsewhere`` tickets (the text names another
  catalog repository than the tracker it was filed in) are counted apart.

A wrong-repo ``proceed`` is the worst outcome, so the headline is proceed precision; the price
is the ask rate on tickets a person could decide. Run::

    python benchmarks/repo_detection.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.baselines.repo_rules_v1 import detect_repo as detect_v1  # noqa: E402
from benchmarks.baselines.repo_rules_v1 import legacy_view  # noqa: E402
from veranda_dagster.domain.catalog import Catalog, load_catalog  # noqa: E402
from veranda_dagster.domain.models import RepoGuess, Ticket  # noqa: E402
from veranda_dagster.domain.repo_detection import detect_repo  # noqa: E402

DEFAULT_TABLE = ROOT / "tests/fixtures/repo_detection/tickets.json"
REAL = ROOT / "benchmarks/data/repo_detection"
Detector = Callable[[Ticket, Catalog], RepoGuess]
RULES: dict[str, Detector] = {
    "current": lambda t, c: detect_v1(t, legacy_view(c)),
    "new": detect_repo,
}


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


def score(outcomes: list[tuple[str, str | None, RepoGuess]]) -> dict[str, Any]:
    """``(label, gold repo, guess)`` -> the numbers. ``label`` is ``proceed`` or ``ask``."""
    proceeds = [(lab, gold, g) for lab, gold, g in outcomes if g.decision == "proceed"]
    right = [1 for _, gold, g in proceeds if g.repo == gold]
    decidable = [g for lab, _, g in outcomes if lab == "proceed"]
    ambiguous = [g for lab, _, g in outcomes if lab == "ask"]
    correct = sum(
        1
        for lab, gold, g in outcomes
        if (lab == "ask" and g.decision == "ask")
        or (lab == "proceed" and g.decision == "proceed" and g.repo == gold)
    )
    n = len(outcomes)
    return {
        "tickets": n,
        "proceed": len(proceeds),
        "wrong_proceed": len(proceeds) - len(right),
        "proceed_precision": len(right) / len(proceeds) if proceeds else 1.0,
        "ask_rate": (n - len(proceeds)) / n if n else 0.0,
        "decidable": len(decidable),
        "ask_rate_decidable": (
            sum(g.decision == "ask" for g in decidable) / len(decidable) if decidable else 0.0
        ),
        "ambiguous": len(ambiguous),
        "asked_ambiguous": (
            sum(g.decision == "ask" for g in ambiguous) / len(ambiguous) if ambiguous else 1.0
        ),
        "accuracy": correct / n if n else 0.0,
    }


def evaluate(table: Path = DEFAULT_TABLE) -> dict[str, Any]:
    """The in-repo table with the new rules, row by row (what the unit test pins)."""
    data = json.loads(table.read_text(encoding="utf-8"))
    catalog = load_catalog(table.parent / data["catalog"])
    mismatches, outcomes = {}, []
    for row in data["rows"]:
        guess = detect_repo(Ticket.model_validate(row["ticket"]), catalog)
        got = guess.model_dump(include={"repo", "decision", "signal", "candidates", "confidence"})
        if wrong := row_mismatches(row["expect"], got):
            mismatches[row["name"]] = wrong
        outcomes.append((row["expect"]["decision"], row["expect"].get("repo"), guess))
    return {**score(outcomes), "mismatches": mismatches}


def table_side_by_side(table: Path = DEFAULT_TABLE) -> dict[str, dict[str, Any]]:
    data = json.loads(table.read_text(encoding="utf-8"))
    catalog = load_catalog(table.parent / data["catalog"])
    out = {}
    for name, rules in RULES.items():
        outcomes = [
            (
                row["expect"]["decision"],
                row["expect"].get("repo"),
                rules(Ticket.model_validate(row["ticket"]), catalog),
            )
            for row in data["rows"]
        ]
        out[name] = score(outcomes)
    return out


def real_ticket(case: dict[str, Any]) -> Ticket:
    return Ticket(id=case["id"], source="linear", title=case["title"], description=case["body"])


def evaluate_real(real: Path = REAL) -> dict[str, Any]:
    """Real issues per org and per split, both rule sets, plus every decision for inspection."""
    cases = json.loads((real / "real_tickets.json").read_text(encoding="utf-8"))["tickets"]
    catalogs = {p.stem: load_catalog(p) for p in sorted((real / "catalogs").glob("*.json"))}
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        for key in (case["org"], f"split:{case['split']}", "all"):
            groups.setdefault(key, []).append(case)
    decisions: dict[str, dict[str, RepoGuess]] = {name: {} for name in RULES}
    for name, rules in RULES.items():
        for case in cases:
            decisions[name][case["id"]] = rules(real_ticket(case), catalogs[case["org"]])
    report: dict[str, Any] = {"groups": {}, "elsewhere": {}, "cases": []}
    for key, members in groups.items():
        scored = [c for c in members if c["label"] in ("proceed", "ask")]
        report["groups"][key] = {
            name: score([(c["label"], c["filed_in"], decisions[name][c["id"]]) for c in scored])
            for name in RULES
        }
    for case in cases:
        row = {k: case[k] for k in ("id", "org", "split", "label", "filed_in")}
        for name in RULES:
            guess = decisions[name][case["id"]]
            row[name] = {"decision": guess.decision, "repo": guess.repo, "signal": guess.signal}
        report["cases"].append(row)
        if case["label"] == "elsewhere":
            report["elsewhere"][case["id"]] = {n: row[n] for n in RULES}
    return report


def _line(label: str, s: dict[str, Any]) -> str:
    return (
        f"| {label} | {s['tickets']} | {s['proceed_precision']:.3f} ({s['wrong_proceed']} wrong)"
        f" | {s['ask_rate']:.3f} | {s['ask_rate_decidable']:.3f} of {s['decidable']}"
        f" | {s['asked_ambiguous']:.3f} of {s['ambiguous']} | {s['accuracy']:.3f} |"
    )


def render(table: dict[str, Any], real: dict[str, Any]) -> str:
    head = (
        "| set / rules | tickets | proceed precision | ask rate | ask rate, decidable "
        "| asked, ambiguous | accuracy |\n| --- | --- | --- | --- | --- | --- | --- |"
    )
    lines = ["In-repo table:", head]
    lines += [_line(name, s) for name, s in table.items()]
    lines += ["", "Real tickets:", head]
    order = [k for k in real["groups"] if not k.startswith(("split:", "all"))]
    for key in [*sorted(order), "split:dev", "split:check", "all"]:
        for name, s in real["groups"][key].items():
            lines.append(_line(f"{key} / {name}", s))
    lines += ["", "Filed in one tracker, text names another repository (not scored):"]
    for case, by_rules in real["elsewhere"].items():
        shown = "; ".join(
            f"{n}: {d['decision']} {d['repo'] or ''}".strip() for n, d in by_rules.items()
        )
        lines.append(f"- {case}: {shown}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every number and decision here")
    parser.add_argument("--show", choices=["misses", "none"], default="none")
    args = parser.parse_args(argv)
    pinned = evaluate()
    table = table_side_by_side()
    real = evaluate_real()
    print(render(table, real))
    if args.show == "misses":
        for row in real["cases"]:
            new = row["new"]
            right = (row["label"] == "ask" and new["decision"] == "ask") or (
                row["label"] == "proceed"
                and new["repo"] == row["filed_in"]
                and new["decision"] == "proceed"
            )
            if not right and row["label"] != "elsewhere":
                print(f"  MISS {row['id']} label={row['label']} new={new} current={row['current']}")
    for name, wrong in pinned["mismatches"].items():
        print(f"  MISMATCH {name}: {'; '.join(wrong)}")
    if args.json:
        args.json.write_text(json.dumps({"table": table, "real": real}, indent=1))
    return 0 if not pinned["mismatches"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
