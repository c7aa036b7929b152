"""Fit a proceed/ask gate for repository detection on the development splits, and judge it
only by leave-one-org-out (issue 33, round seven).

For every development ticket (never a hidden split: its tickets are not even loaded) the
existing ``Evidence`` gives a feature vector of the leader and its runner-up
(``gate_features``); the label is "proceeding on the leader would be right" (the ticket is
labelled ``proceed`` and the leader is the repository it was filed in). An L2 logistic model is
fit in plain Python (Newton's method, ``fit_logistic``). For each org held out, the weights are
fit on the other orgs, and so are the thresholds (nested: the training orgs' own
leave-one-org-out scores choose them), so nothing is tuned on the held-out org:

* **veto**: a rules' proceed whose P(leader right) is below ``tau`` asks instead; ``tau`` is
  the threshold that, on the training orgs, removes the most wrong proceeds net of right ones
  lost (never more right lost than wrong removed);
* **converter**: a rules' ask whose leader has P >= ``tau2`` proceeds; ``tau2`` is the lowest
  threshold under which no training-org ask would have become a wrong proceed or a proceed on
  an ask-labelled ticket.

``--l2 auto`` chooses the strength inside each fold too (``L2_GRID``, by the training orgs' own
leave-one-org-out log loss); ``--features compact`` fits ``COMPACT_FEATURES`` only;
``--in-sample`` fits weights and thresholds on every org at once, the optimistic figure a fit
on the development orgs would claim. Finding (issue 33, round seven; docs/benchmarks.md): no
variant beats the rules leave-one-org-out by more than one ticket of 232, so no gate is
shipped. Run::

    python benchmarks/fit_repo_gate.py [--l2 1.0|auto] [--features full|compact]
        [--in-sample] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.repo_detection import HIDDEN_SPLITS, REAL, TICKET_FILES, real_ticket  # noqa: E402
from veranda_dagster.domain.intake.catalog import Catalog, load_catalog  # noqa: E402
from veranda_dagster.domain.intake.repo_detection import (  # noqa: E402
    detect_repo,
    shipped_by,
    shippers_of,
)
from veranda_dagster.domain.intake.repo_evidence import (  # noqa: E402
    DECISIVE_KINDS,
    Evidence,
    gather_evidence,
    org_brand,
    umbrella_of,
)
from veranda_dagster.plugins import load_plugins  # noqa: E402

MAX_NEWTON_STEPS: Final = 50
"""Newton's method on an L2-regularised logistic loss converges in under ten steps; the cap
only stops a singular system from looping."""
NEWTON_TOLERANCE: Final = 1e-9
"""Largest Newton step (standardised units) at which the fit counts as converged."""

GROUPS: Final[dict[str, frozenset[str]]] = {
    "pointer": DECISIVE_KINDS,
    "import": frozenset({"import"}),
    "install": frozenset({"install"}),
    "command": frozenset({"command", "hook"}),
    "trace": frozenset({"trace"}),
    "usage": frozenset({"usage", "image", "chart"}),
    "title": frozenset({"title"}),
    "vocabulary": frozenset({"api"}),
    "passing": frozenset(
        {
            "prose",
            "env",
            "path",
            "misspelling",
            "docs_link",
            "url_docs",
            "url_comment",
            "former_name:url_docs",
            "former_name:url_comment",
        }
    ),
}
"""Evidence kinds grouped by what the mention does: points, uses, titles, defines, passes."""
RUNNER_GROUPS = ("pointer", "usage_all", "title", "vocabulary", "passing")
USAGE_ALL = frozenset({"import", "install", "command", "hook", "trace", "usage", "image", "chart"})


def _group_weight(ev: Evidence, repo: str | None, kinds: frozenset[str]) -> float:
    if repo is None:
        return 0.0
    return sum(i.weight for i in ev.items() if i.repo == repo and i.kind in kinds)


def gate_features(ev: Evidence, catalog: Catalog) -> dict[str, float] | None:
    """The leader's and runner-up's evidence as numbers; ``None`` without a leader."""
    scores = ev.scores()
    ranked = sorted(scores, key=lambda r: (-scores[r], r))
    if not ranked:
        return None
    top = ranked[0]
    run = ranked[1] if len(ranked) > 1 else None
    f: dict[str, float] = {}
    for name, kinds in GROUPS.items():
        f[f"lead_{name}"] = _group_weight(ev, top, kinds)
    runner_kinds = {**GROUPS, "usage_all": USAGE_ALL}
    for name in RUNNER_GROUPS:
        f[f"run_{name}"] = _group_weight(ev, run, runner_kinds[name])
    lead = scores[top]
    second = scores[run] if run else 0.0
    f["score"] = lead
    f["ratio"] = second / lead if lead else 0.0
    f["margin"] = lead - second
    f["lead_usage_all"] = _group_weight(ev, top, USAGE_ALL)
    lead_kinds = ev.kinds(top)
    named = bool(lead_kinds & (DECISIVE_KINDS | GROUPS["title"] | GROUPS["passing"]))
    package = bool(lead_kinds & USAGE_ALL)
    f["class_package"] = float(not named and package)
    f["class_vocabulary"] = float(not named and not package)
    top_name = top.rsplit("/", 1)[-1]
    run_name = run.rsplit("/", 1)[-1] if run else ""
    f["run_is_umbrella"] = float(bool(run) and umbrella_of(run_name, top_name))
    f["lead_is_umbrella"] = float(bool(run) and umbrella_of(top_name, run_name))
    f["run_is_dependency"] = float(bool(run) and run in shipped_by(catalog, top))
    f["run_is_dependent"] = float(bool(run) and run in shippers_of(catalog, top))
    brands = {org_brand(o) for o in catalog.orgs}
    f["lead_product_word"] = float(top in ev.family_word)
    f["run_product_word"] = float(bool(run) and run in ev.family_word)
    f["lead_named_like_org"] = float("".join(c for c in top_name.lower() if c.isalnum()) in brands)
    f["repos_with_evidence"] = math.log1p(len(ranked))
    f["catalog_size"] = math.log1p(len(catalog.repositories))
    return f


@dataclass(frozen=True)
class Case:
    """One development ticket as the gate sees it."""

    id: str
    org: str
    split: str
    label: str
    filed_in: str
    leader: str | None
    decision: str
    decided: str | None
    declared: bool
    features: dict[str, float] | None

    @property
    def leader_right(self) -> bool:
        return self.label == "proceed" and self.leader == self.filed_in


def load_dev_cases(real: Path = REAL) -> list[Case]:
    """Every development ticket scored by the benchmark (``proceed`` or ``ask``), with the
    rules' decision; a hidden split's tickets are dropped before anything reads them."""
    load_plugins()
    catalogs = {p.stem: load_catalog(p) for p in sorted((real / "catalogs").glob("*.json"))}
    out = []
    for name in TICKET_FILES:
        path = real / name
        if not path.is_file():
            continue
        for raw in json.loads(path.read_text(encoding="utf-8"))["tickets"]:
            if raw["split"] in HIDDEN_SPLITS or raw["label"] not in ("proceed", "ask"):
                continue
            catalog = catalogs[raw["org"]]
            ticket = real_ticket(raw)
            ev = gather_evidence(ticket, catalog)
            scores = ev.scores()
            ranked = sorted(scores, key=lambda r: (-scores[r], r))
            guess = detect_repo(ticket, catalog)
            out.append(
                Case(
                    id=raw["id"],
                    org=raw["org"],
                    split=raw["split"],
                    label=raw["label"],
                    filed_in=raw["filed_in"],
                    leader=ranked[0] if ranked else None,
                    decision=guess.decision,
                    decided=guess.repo if guess.decision == "proceed" else None,
                    declared=bool(ev.declared or ev.declared_unknown or ev.labels_unknown),
                    features=gate_features(ev, catalog),
                )
            )
    return out


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (``a`` is positive definite here)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            factor = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= factor * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


@dataclass(frozen=True)
class Model:
    """Weights on the raw features (standardisation folded in) and the bias."""

    names: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float

    def p(self, features: dict[str, float]) -> float:
        z = self.bias + sum(w * features[n] for n, w in zip(self.names, self.weights, strict=True))
        return _sigmoid(z)


def fit_logistic(
    rows: Sequence[dict[str, float]], labels: Sequence[bool], l2: float = 1.0
) -> Model:
    """L2 logistic regression by Newton's method on standardised features (the bias is not
    penalised); deterministic: no random start, no sampling, features in sorted order."""
    names = tuple(sorted(rows[0]))
    n = len(rows)
    mean = [sum(r[k] for r in rows) / n for k in names]
    std = [
        math.sqrt(sum((r[k] - mu) ** 2 for r in rows) / n) or 1.0
        for k, mu in zip(names, mean, strict=True)
    ]
    xs = [
        [1.0] + [(r[k] - mu) / sd for k, mu, sd in zip(names, mean, std, strict=True)] for r in rows
    ]
    ys = [1.0 if y else 0.0 for y in labels]
    d = len(names) + 1
    w = [0.0] * d
    for _ in range(MAX_NEWTON_STEPS):
        grad = [0.0 if j == 0 else l2 * w[j] for j in range(d)]
        hess = [[(l2 if i == j and i else 0.0) for j in range(d)] for i in range(d)]
        for x, y in zip(xs, ys, strict=True):
            p = _sigmoid(sum(a * b for a, b in zip(w, x, strict=True)))
            s = p * (1 - p)
            for i in range(d):
                grad[i] += (p - y) * x[i]
                if x[i]:
                    row = hess[i]
                    for j in range(i, d):
                        row[j] += s * x[i] * x[j]
        for i in range(d):
            hess[i][i] += 1e-9
            for j in range(i):
                hess[i][j] = hess[j][i]
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < NEWTON_TOLERANCE:
            break
    raw = tuple(w[j + 1] / std[j] for j in range(len(names)))
    bias = w[0] - sum(w[j + 1] * mean[j] / std[j] for j in range(len(names)))
    return Model(names, raw, bias)


def _trainable(cases: Sequence[Case]) -> list[Case]:
    return [c for c in cases if c.features is not None]


def fit_cases(cases: Sequence[Case], l2: float) -> Model:
    rows = _trainable(cases)
    return fit_logistic(
        [c.features for c in rows if c.features], [c.leader_right for c in rows], l2
    )


def gateable(case: Case) -> bool:
    """A decision the gate may touch: a leader exists and no declaration or unknown label
    decided it (those are a person's word, or a question about a name)."""
    return case.features is not None and not case.declared


def choose_veto(scored: Sequence[tuple[Case, float]]) -> float:
    """The veto threshold: the one that removes the most wrong proceeds net of right ones
    (ties: the lowest); 0.0 (no veto) unless it removes more wrong than right."""
    proceeds = [(c, p) for c, p in scored if c.decision == "proceed" and gateable(c)]
    best, best_gain = 0.0, 0
    for _, p in sorted(proceeds, key=lambda cp: cp[1]):
        tau = p + 1e-12
        vetoed = [c for c, q in proceeds if q < tau]
        wrong = sum(c.decided != c.filed_in or c.label != "proceed" for c in vetoed)
        gain = wrong - (len(vetoed) - wrong)
        if gain > best_gain:
            best, best_gain = tau, gain
    return best


def choose_converter(scored: Sequence[tuple[Case, float]]) -> float:
    """The converter threshold: the lowest one above every training ask whose leader would
    have been a wrong proceed (or a proceed on a ticket labelled ask); above 1.0 (never) when
    there is no such ask's score below 1."""
    asks = [(c, p) for c, p in scored if c.decision == "ask" and gateable(c)]
    bad = [p for c, p in asks if not c.leader_right]
    return max(bad, default=0.0) + 1e-12


def orgs_of(cases: Sequence[Case]) -> list[str]:
    return sorted({c.org for c in cases})


def looo_scores(cases: Sequence[Case], l2: float) -> dict[str, float]:
    """P(leader right) for every case, each from weights fit without its org."""
    out: dict[str, float] = {}
    for org in orgs_of(cases):
        model = fit_cases([c for c in cases if c.org != org], l2)
        for c in cases:
            if c.org == org and c.features is not None:
                out[c.id] = model.p(c.features)
    return out


def nested_thresholds(cases: Sequence[Case], l2: float) -> dict[str, tuple[float, float]]:
    """Per held-out org, (veto tau, converter tau') chosen on the training orgs' own
    leave-one-org-out scores."""
    out = {}
    for org in orgs_of(cases):
        train = [c for c in cases if c.org != org]
        inner = looo_scores(train, l2)
        scored = [(c, inner[c.id]) for c in train if c.id in inner]
        out[org] = (choose_veto(scored), choose_converter(scored))
    return out


L2_GRID: Final = (0.3, 1.0, 3.0, 10.0, 30.0)
"""The regularisation strengths a fold chooses among (``--l2 auto``), by its training orgs'
own leave-one-org-out log loss."""


def log_loss(cases: Sequence[Case], scores: dict[str, float]) -> float:
    """Mean negative log-likelihood of the labels under ``scores`` (clipped away from 0 and 1)."""
    rows = [
        (c.leader_right, min(max(scores[c.id], 1e-6), 1 - 1e-6)) for c in cases if c.id in scores
    ]
    return -sum(math.log(p if ok else 1 - p) for ok, p in rows) / len(rows)


def nested_auto(
    cases: Sequence[Case],
) -> tuple[dict[str, float], dict[str, tuple[float, float]], dict[str, float]]:
    """Leave-one-org-out scores and thresholds with the strength chosen inside each fold: the
    training orgs' own leave-one-org-out log loss picks it from ``L2_GRID``, their scores under
    it pick the thresholds, and the weights for the held-out org are fit on them with it."""
    scores: dict[str, float] = {}
    taus: dict[str, tuple[float, float]] = {}
    chosen: dict[str, float] = {}
    for org in orgs_of(cases):
        train = [c for c in cases if c.org != org]
        inner = {l2: looo_scores(train, l2) for l2 in L2_GRID}
        best = min(L2_GRID, key=lambda l2: (log_loss(train, inner[l2]), l2))
        scored = [(c, inner[best][c.id]) for c in train if c.id in inner[best]]
        taus[org] = (choose_veto(scored), choose_converter(scored))
        chosen[org] = best
        model = fit_cases(train, best)
        for c in cases:
            if c.org == org and c.features is not None:
                scores[c.id] = model.p(c.features)
    return scores, taus, chosen


COMPACT_FEATURES: Final = (
    "lead_pointer",
    "lead_usage_all",
    "lead_title",
    "lead_vocabulary",
    "lead_passing",
    "run_pointer",
    "run_usage_all",
    "run_title",
    "run_passing",
    "ratio",
)
"""A second, smaller feature set written before it was measured: the leader's and runner-up's
evidence in the rules' own five groups and their ratio (fewer weights to fit to 16 orgs)."""
FULL_EXCLUDES: Final = frozenset({"lead_usage_all"})
"""The full set splits the leader's usage by kind instead."""


def project(cases: Sequence[Case], names: Sequence[str] | None) -> list[Case]:
    """The cases with only the ``names`` features (``None``: the full set)."""
    out = []
    for c in cases:
        if c.features is None:
            out.append(c)
            continue
        keep = names or [k for k in c.features if k not in FULL_EXCLUDES]
        out.append(replace(c, features={k: c.features[k] for k in keep}))
    return out


def apply_gate(case: Case, p: float | None, veto: float, convert: float) -> tuple[str, str | None]:
    """The decision after the gate: (decision, repository proceeded on)."""
    if p is None or not gateable(case):
        return case.decision, case.decided
    if case.decision == "proceed" and p < veto:
        return "ask", None
    if case.decision == "ask" and p >= convert:
        return "proceed", case.leader
    return case.decision, case.decided


def tally(rows: Sequence[tuple[Case, str, str | None]]) -> dict[str, Any]:
    """Right, wrong proceeds, proceeds and asks on decidable tickets, as the benchmark counts."""
    right = sum(
        (c.label == "ask" and d == "ask")
        or (c.label == "proceed" and d == "proceed" and r == c.filed_in)
        for c, d, r in rows
    )
    proceeds = [(c, r) for c, d, r in rows if d == "proceed"]
    decidable = [d for c, d, _ in rows if c.label == "proceed"]
    return {
        "tickets": len(rows),
        "right": right,
        "accuracy": round(right / len(rows), 3) if rows else 0.0,
        "proceeds": len(proceeds),
        "wrong_proceeds": sum(r != c.filed_in for c, r in proceeds),
        "ask_rate_decidable": round(decidable.count("ask") / len(decidable), 3)
        if decidable
        else 0.0,
    }


def auc(scored: Sequence[tuple[bool, float]]) -> float:
    """Probability that a right leader scores above a wrong one (ties count half)."""
    pos = [p for ok, p in scored if ok]
    neg = [p for ok, p in scored if not ok]
    if not pos or not neg:
        return 0.5
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def in_sample(
    cases: Sequence[Case], l2: float
) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Scores and thresholds fit on every org at once: what the dev numbers would claim."""
    model = fit_cases(cases, l2)
    scores = {c.id: model.p(c.features) for c in cases if c.features is not None}
    scored = [(c, scores[c.id]) for c in cases if c.id in scores]
    taus = (choose_veto(scored), choose_converter(scored))
    return scores, {org: taus for org in orgs_of(cases)}


def evaluate(cases: Sequence[Case], l2: float | None, *, looo: bool = True) -> dict[str, Any]:
    """The rules and the three uses of the gate; ``l2=None`` chooses it inside each fold."""
    chosen: dict[str, float] = {}
    if l2 is None:
        scores, taus, chosen = nested_auto(cases)
    elif looo:
        scores, taus = looo_scores(cases, l2), nested_thresholds(cases, l2)
    else:
        scores, taus = in_sample(cases, l2)
    uses = {"rules": (0, 0), "veto": (1, 0), "converter": (0, 1), "both": (1, 1)}
    report: dict[str, Any] = {"thresholds": taus, "uses": {}, "l2": chosen}
    report["auc"] = auc([(c.leader_right, scores[c.id]) for c in cases if c.id in scores])
    for use, (v, k) in uses.items():
        rows = []
        for c in cases:
            veto, convert = taus[c.org]
            d, r = apply_gate(c, scores.get(c.id), veto if v else 0.0, convert if k else 2.0)
            rows.append((c, d, r))
        per = {
            key: tally([row for row in rows if key in ("all", row[0].split)])
            for key in ("all", *sorted({c.split for c in cases}))
        }
        report["uses"][use] = per
        report.setdefault("moved", {})[use] = [
            (c.id, c.decision, d, c.decided or c.leader, c.filed_in, c.label)
            for c, d, r in rows
            if d != c.decision
        ]
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--l2", default="1.0", help="the L2 strength, or `auto` to choose it inside each fold"
    )
    parser.add_argument("--features", choices=["full", "compact"], default="full")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--in-sample",
        action="store_true",
        help="fit weights and thresholds on every org at once (the optimistic dev figure)",
    )
    args = parser.parse_args(argv)
    cases = project(load_dev_cases(), COMPACT_FEATURES if args.features == "compact" else None)
    l2 = None if args.l2 == "auto" else float(args.l2)
    report = evaluate(cases, l2, looo=not args.in_sample)
    print(f"AUC of P(leader right): {report['auc']:.3f}")
    for use, per in report["uses"].items():
        for key, t in per.items():
            print(
                f"{use:9} {key:10} right {t['right']:3} of {t['tickets']:3} "
                f"wrong {t['wrong_proceeds']} of {t['proceeds']} ask(decidable) "
                f"{t['ask_rate_decidable']:.3f}"
            )
    for org, (veto, convert) in report["thresholds"].items():
        lam = f" l2={report['l2'][org]}" if org in report["l2"] else ""
        print(f"  {org:16} veto<{veto:.3f} convert>={convert:.3f}{lam}")
    for use, moved in report["moved"].items():
        for row in moved:
            print(f"  moved {use}: {row}")
    full = fit_cases(cases, l2 or 1.0)
    for name, w in sorted(zip(full.names, full.weights, strict=True), key=lambda t: -abs(t[1])):
        print(f"  w {name:22} {w:+.3f}")
    print(f"  bias {full.bias:+.3f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
