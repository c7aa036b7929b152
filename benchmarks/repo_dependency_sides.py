"""Which side of a dependent/dependency pair a development ticket was filed in, by what the
ticket does with each side (issue 33, round seven).

For every development ticket (a hidden split's tickets are dropped before they are read) whose
three highest-scored repositories include a pair where one depends on the other (it ships or
wraps it, and not the other way round: ``shipped_by``/``shippers_of``), the ticket's evidence
for each side is classed as **used** (a pointer: link, label, ``uses:``, ``org/name``; or a
use: import, install, command, frame, image, chart) or **named** (only its name: title, prose,
version line, path). The table counts, per label, which side the ticket was filed in. A rule
that settles such a tie must follow these counts on tickets labelled ``proceed`` without
proceeding on the ones labelled ``ask``. Run::

    python benchmarks/repo_dependency_sides.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.repo_detection import HIDDEN_SPLITS, REAL, TICKET_FILES, real_ticket  # noqa: E402
from veranda_dagster.domain.intake.catalog import Catalog, load_catalog  # noqa: E402
from veranda_dagster.domain.intake.repo_detection import (  # noqa: E402
    USAGE_KINDS,
    shipped_by,
    shippers_of,
)
from veranda_dagster.domain.intake.repo_evidence import (  # noqa: E402
    DECISIVE_KINDS,
    Evidence,
    gather_evidence,
)
from veranda_dagster.plugins import load_plugins  # noqa: E402

PAIR_DEPTH: Final = 3
"""How many of the highest-scored repositories a pair is looked for among: the leader, its
runner-up and one more (a version table can list many related packages further down)."""


def side_class(ev: Evidence, repo: str) -> str:
    """``used`` when the ticket points at or uses ``repo``, ``named`` when it only names it."""
    return "used" if ev.kinds(repo) & (DECISIVE_KINDS | USAGE_KINDS) else "named"


def dependency_pair(ev: Evidence, catalog: Catalog) -> tuple[str, str] | None:
    """The first (dependent, dependency) pair among the ``PAIR_DEPTH`` highest-scored
    repositories, the dependent ranked first; ``None`` when there is none."""
    scores = ev.scores()
    ranked = sorted(scores, key=lambda r: (-scores[r], r))[:PAIR_DEPTH]
    for dependent in ranked:
        deps = set(shipped_by(catalog, dependent)) - set(shippers_of(catalog, dependent))
        for dependency in ranked:
            if dependency in deps:
                return dependent, dependency
    return None


def sides(cases: list[dict[str, str]], catalogs: dict[str, Catalog]) -> Counter[tuple[str, ...]]:
    """(label, dependent's class, dependency's class, side filed in) -> tickets."""
    out: Counter[tuple[str, ...]] = Counter()
    for case in cases:
        catalog = catalogs[case["org"]]
        ev = gather_evidence(real_ticket(case), catalog)
        pair = dependency_pair(ev, catalog)
        if pair is None:
            continue
        dependent, dependency = pair
        filed = {dependent: "dependent", dependency: "dependency"}.get(case["filed_in"], "neither")
        out[(case["label"], side_class(ev, dependent), side_class(ev, dependency), filed)] += 1
    return out


def dev_cases(real: Path = REAL) -> list[dict[str, str]]:
    """The development tickets scored by the benchmark; a hidden split's are never kept."""
    cases = []
    for name in TICKET_FILES:
        path = real / name
        if path.is_file():
            for raw in json.loads(path.read_text(encoding="utf-8"))["tickets"]:
                if raw["split"] not in HIDDEN_SPLITS and raw["label"] in ("proceed", "ask"):
                    cases.append(raw)
    return cases


def main(argv: list[str]) -> int:
    del argv
    load_plugins()
    catalogs = {p.stem: load_catalog(p) for p in sorted((REAL / "catalogs").glob("*.json"))}
    table = sides(dev_cases(), catalogs)
    print("| label | dependent | dependency | filed in | tickets |")
    print("| --- | --- | --- | --- | --- |")
    for key, n in sorted(table.items()):
        print(f"| {' | '.join(key)} | {n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
