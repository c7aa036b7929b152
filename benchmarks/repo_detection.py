"""Measure repository detection: the rules as they stand beside two frozen older rule sets
(``baselines/repo_rules_v1.py``, before issue 15; ``baselines/repo_rules_v2/``, before issue 33),
in one process, on three sets:

* the in-repo table (``tests/fixtures/repo_detection/tickets.json``), written beside the rules;
* real GitHub issues from five organisations (``data/repo_detection/real_tickets.json``);
* real GitHub issues from nine more organisations (``data/repo_detection/wide_tickets.json``),
  collected for issue 33 before any rule change. Its ``wide-check`` split (celery, tox-dev) is
  the check set: it is measured with ``--totals-only`` and never printed case by case;
* ``data/repo_detection/wider_tickets.json`` (four more orgs, ``wider-dev``) and
  ``data/repo_detection/far_tickets.json`` (``far-dev``: googleapis, Azure, apache -- families
  of sibling repositories around shared names, the check orgs' shape), development data.

Each org's catalog is ``data/repo_detection/catalogs/<org>.json``. The gold of a ``proceed``
ticket is the repository it was filed in; ``ask`` tickets are ones a person could not decide from
the text; ``elsewhere`` tickets (the text names another catalog repository than the tracker it was
filed in) are counted apart.

A wrong-repo ``proceed`` is the worst outcome, so the headline is proceed precision; the price
is the ask rate on tickets a person could decide. Beneath the tables, the new rules' proceeds on
the development splits (never a hidden one) by deciding evidence kind: how often each kind is
wrong, over how many orgs, and how it does with its largest org left out -- the estimate of how
a kind does on an org nobody tuned it to. Run::

    python benchmarks/repo_detection.py [--totals-only] [--show misses] [--json out.json]
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
from benchmarks.baselines.repo_rules_v2.detection import detect_repo as detect_v2  # noqa: E402
from veranda_dagster.domain.core.models import RepoGuess, Ticket  # noqa: E402
from veranda_dagster.domain.intake.catalog import Catalog, load_catalog  # noqa: E402
from veranda_dagster.domain.intake.repo_detection import (  # noqa: E402
    deciding_kind,
    detect_repo,
    naming_class,
)
from veranda_dagster.plugins import load_plugins  # noqa: E402

DEFAULT_TABLE = ROOT / "tests/fixtures/repo_detection/tickets.json"
REAL = ROOT / "benchmarks/data/repo_detection"
Detector = Callable[[Ticket, Catalog], RepoGuess]
RULES: dict[str, Detector] = {
    "v1": lambda t, c: detect_v1(t, legacy_view(c)),
    "v2": detect_v2,
    "new": detect_repo,
}
"""``v1``: before issue 15; ``v2``: before issue 33 (both frozen); ``new``: the rules now."""
TICKET_FILES = ("real_tickets.json", "wide_tickets.json", "wider_tickets.json", "far_tickets.json")
HIDDEN_SPLITS = frozenset({"wide-check"})
"""Splits measured by totals only: their cases are never printed or written out."""


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
    asked = [(gold, g) for lab, gold, g in outcomes if lab == "proceed" and g.decision == "ask"]
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
        "asks_hit": (sum(gold in g.candidates for gold, g in asked) / len(asked) if asked else 1.0),
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


def load_cases(real: Path = REAL) -> list[dict[str, Any]]:
    """Every real ticket of every set, in file order."""
    cases: list[dict[str, Any]] = []
    for name in TICKET_FILES:
        path = real / name
        if path.is_file():
            cases += json.loads(path.read_text(encoding="utf-8"))["tickets"]
    return cases


def evaluate_real(real: Path = REAL) -> dict[str, Any]:
    """Real issues per org and per split, every rule set, plus every decision for inspection."""
    cases = load_cases(real)
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
            row[name] = {
                "decision": guess.decision,
                "repo": guess.repo,
                "signal": guess.signal,
                "candidates": guess.candidates,
            }
        report["cases"].append(row)
        if case["label"] == "elsewhere":
            report["elsewhere"][case["id"]] = {n: row[n] for n in RULES}
    report["kinds"] = evidence_kinds(report, decisions["new"])
    report["classes"] = evidence_kinds(report, decisions["new"], key=naming_class)
    return report


def wilson_low(right: int, n: int, z: float = 1.96) -> float:
    """The lower end of the 95% Wilson interval of ``right`` of ``n``: how good a kind's
    precision can be claimed to be from so few proceeds (5 of 5 is 0.57, 30 of 30 0.89)."""
    if not n:
        return 0.0
    p = right / n
    centre = p + z * z / (2 * n)
    spread = z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5
    return float((centre - spread) / (1 + z * z / n))


def evidence_kinds(
    real: dict[str, Any],
    decisions: dict[str, RepoGuess],
    key: Callable[[RepoGuess], str | None] = deciding_kind,
) -> list[dict[str, Any]]:
    """Per deciding evidence kind (or another ``key`` of a proceed, e.g. ``naming_class``), the
    new rules' proceeds on the development splits only (never a hidden split): how often each
    is wrong, over how many orgs its record was made, how much of it one org carries, its
    precision with that org left out, and the worst precision with any one org left out --
    an estimate of how it does on an org nobody tuned it to."""
    by_kind: dict[str, list[tuple[str, bool]]] = {}
    for row in real["cases"]:
        if row["split"] in HIDDEN_SPLITS or row["label"] not in ("proceed", "ask"):
            continue
        guess = decisions[row["id"]]
        kind = key(guess)
        if kind is not None:
            by_kind.setdefault(kind, []).append((row["org"], guess.repo == row["filed_in"]))
    out = []
    for kind, rows in by_kind.items():
        orgs: dict[str, int] = {}
        for org, _ in rows:
            orgs[org] = orgs.get(org, 0) + 1
        largest = max(orgs, key=lambda o: (orgs[o], o))
        rest = [ok for org, ok in rows if org != largest]
        right = sum(ok for _, ok in rows)
        worst_out = min(
            (
                (sum(ok for o, ok in rows if o != org) / (len(rows) - orgs[org]), org)
                for org in orgs
                if len(rows) > orgs[org]
            ),
            default=(1.0, ""),
        )
        out.append(
            {
                "kind": kind,
                "proceeds": len(rows),
                "wrong": len(rows) - right,
                "precision": right / len(rows),
                "wilson_low": wilson_low(right, len(rows)),
                "orgs": len(orgs),
                "orgs_wrong": len({org for org, ok in rows if not ok}),
                "largest_org": largest,
                "largest_share": orgs[largest] / len(rows),
                "without_largest": (f"{sum(rest)} of {len(rest)}" if rest else "none left"),
                "worst_one_org_out": worst_out[0],
                "worst_org": worst_out[1],
            }
        )
    return sorted(out, key=lambda k: (-k["proceeds"], k["kind"]))


KIND_HEAD = (
    "| deciding evidence | proceeds | wrong | precision | 95% low | orgs (with a wrong) "
    "| largest org (share) | right without it |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
)


def _kind_line(k: dict[str, Any]) -> str:
    return (
        f"| {k['kind']} | {k['proceeds']} | {k['wrong']} | {k['precision']:.3f}"
        f" | {k['wilson_low']:.2f} | {k['orgs']} ({k['orgs_wrong']}) | {k['largest_org']}"
        f" ({k['largest_share']:.2f}) | {k['without_largest']} |"
    )


CLASS_HEAD = (
    "| the ticket names the chosen repository by | proceeds | wrong | precision | 95% low "
    "| orgs (with a wrong) | worst with one org left out |\n"
    "| --- | --- | --- | --- | --- | --- | --- |"
)


def _class_line(k: dict[str, Any]) -> str:
    return (
        f"| {k['kind']} | {k['proceeds']} | {k['wrong']} | {k['precision']:.3f}"
        f" | {k['wilson_low']:.2f} | {k['orgs']} ({k['orgs_wrong']})"
        f" | {k['worst_one_org_out']:.3f} (without {k['worst_org'] or '-'}) |"
    )


def _line(label: str, s: dict[str, Any]) -> str:
    return (
        f"| {label} | {s['tickets']} | {s['accuracy']:.3f}"
        f" | {s['proceed_precision']:.3f} | {s['wrong_proceed']} of {s['proceed']}"
        f" | {s['ask_rate_decidable']:.3f} of {s['decidable']} | {s['asks_hit']:.3f}"
        f" | {s['asked_ambiguous']:.3f} of {s['ambiguous']} |"
    )


HEAD = (
    "| set / rules | tickets | accuracy | proceed precision | wrong proceeds | ask rate, decidable "
    "| asks hit | asked, ambiguous |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
)


def shown_orgs(real: dict[str, Any], *, totals_only: bool) -> list[str]:
    """The orgs that get a row of their own: none with ``totals_only``; otherwise every org
    with no ticket in a hidden split (a check org appears only inside its split's total)."""
    if totals_only:
        return []
    hidden = {c["org"] for c in real["cases"] if c["split"] in HIDDEN_SPLITS}
    return sorted(
        k for k in real["groups"] if not k.startswith(("split:", "all")) and k not in hidden
    )


def render(table: dict[str, Any], real: dict[str, Any], *, totals_only: bool = False) -> str:
    lines = ["In-repo table:", HEAD]
    lines += [_line(name, s) for name, s in table.items()]
    lines += ["", "Real tickets:", HEAD]
    orgs = shown_orgs(real, totals_only=totals_only)
    splits = sorted(k for k in real["groups"] if k.startswith("split:"))
    for key in [*orgs, *splits, "all"]:
        for name, s in real["groups"][key].items():
            lines.append(_line(f"{key} / {name}", s))
    if not totals_only:  # --totals-only shows nothing finer than a split (no kind's orgs)
        lines += ["", "Deciding evidence of the new rules' proceeds (development splits only):"]
        lines += [KIND_HEAD, *(_kind_line(k) for k in real["kinds"])]
        lines += ["", "The same proceeds by how the ticket names the chosen repository:"]
        lines += [CLASS_HEAD, *(_class_line(k) for k in real["classes"])]
        lines += ["", "Filed in one tracker, text names another repository (not scored):"]
        for case, by_rules in real["elsewhere"].items():
            shown = "; ".join(
                f"{n}: {d['decision']} {d['repo'] or ''}".strip() for n, d in by_rules.items()
            )
            if case in shown_ids(real):
                lines.append(f"- {case}: {shown}")
    return "\n".join(lines)


def shown_ids(real: dict[str, Any]) -> set[str]:
    """Ids of the cases that may be printed or written: none of a hidden split."""
    return {c["id"] for c in real["cases"] if c["split"] not in HIDDEN_SPLITS}


def _right(row: dict[str, Any], decision: dict[str, Any]) -> bool:
    if row["label"] == "ask":
        return bool(decision["decision"] == "ask")
    return bool(decision["decision"] == "proceed" and decision["repo"] == row["filed_in"])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every number and decision here")
    parser.add_argument("--show", choices=["misses", "none"], default="none")
    parser.add_argument(
        "--totals-only",
        action="store_true",
        help="print the tables only: no case ids, no misses (how the check set is read)",
    )
    args = parser.parse_args(argv)
    load_plugins()  # the forges' link readers, as the CLI and the Definitions have them
    pinned = evaluate()
    table = table_side_by_side()
    real = evaluate_real()
    print(render(table, real, totals_only=args.totals_only))
    if args.show == "misses" and not args.totals_only:
        for row in real["cases"]:
            if row["split"] in HIDDEN_SPLITS or row["label"] == "elsewhere":
                continue  # the check set is never read case by case
            if not _right(row, row["new"]):
                print(f"  MISS {row['id']} label={row['label']} new={row['new']}")
    for name, wrong in pinned["mismatches"].items():
        print(f"  MISMATCH {name}: {'; '.join(wrong)}")
    if args.json:
        ids = shown_ids(real)
        orgs = set(shown_orgs(real, totals_only=args.totals_only))
        shown = {
            "groups": {
                k: v
                for k, v in real["groups"].items()
                if k.startswith(("split:", "all")) or k in orgs
            },
            "kinds": [] if args.totals_only else real["kinds"],
            "classes": [] if args.totals_only else real["classes"],
            "cases": [] if args.totals_only else [c for c in real["cases"] if c["id"] in ids],
            "elsewhere": {}
            if args.totals_only
            else {k: v for k, v in real["elsewhere"].items() if k in ids},
        }
        args.json.write_text(json.dumps({"table": table, "real": shown}, indent=1))
    return 0 if not pinned["mismatches"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
