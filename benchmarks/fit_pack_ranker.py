"""Fit the pack ranker's weights (``pack_ranker.py``) from captured candidates, and judge the fit
leave-one-project-out beside the hand-set ranking on the same candidate lists.

Input: ``retrieval_inprocess.py --features`` (every dev and heldout case's ranked candidates,
each a feature vector, and the case's gold files). The model is pairwise logistic: for every
gold file and every other candidate among the first ``--depth`` of the same case,
``P(gold above other) = sigmoid(w . (x_gold - x_other))``; each case weighs the same (its pairs
share one unit), and an L2 penalty pulls ``w`` towards the hand-set weights
(``pack_ranker.TODAY_WEIGHTS``; ``--prior zero`` towards 0). Fitted by Newton's method in plain
Python, in a fixed order: the same input gives the same weights, bit for bit.

Leave-one-project-out: each repository's cases are ranked by weights fit without them; recall@1
and recall@6 (``retrieval.recall_at``) are counted on the same captured lists, in the hand-set
order and in the fitted one. A file the ranking never captured cannot be gained by a reorder.

Run::

    python benchmarks/fit_pack_ranker.py FEATURES.json [--l2 1.0] [--depth 30]
        [--lopo-out by_repo.json] [--weights-out weights.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval import recall_at

from veranda_dagster.domain.context.pack_ranker import FEATURES, TODAY_WEIGHTS

MAX_NEWTON_STEPS = 100
"""Newton's method on a convex loss with an L2 term converges in a handful of steps; a bound so
a degenerate input cannot loop."""
NEWTON_TOLERANCE = 1e-10
"""Stop once no weight moves more than this."""
WEIGHT_DIGITS = 3
"""Shipped weights are rounded to this many decimals (and evaluated rounded)."""

Case = Mapping[str, Any]


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _vector(candidate: Mapping[str, Any], names: Sequence[str]) -> list[float]:
    """The candidate's features times the promotion its score then got: the order the pack's
    files are chosen in is the promoted one, so that is the order the weights are fitted to."""
    scale = float(candidate.get("promotion", 1.0))
    return [scale * float(candidate["x"].get(n, 0.0)) for n in names]


def pairs(
    cases: Sequence[Case], names: Sequence[str], depth: int
) -> list[tuple[float, list[float]]]:
    """``(weight, x_gold - x_other)`` for every gold candidate against every other candidate
    among the first ``depth`` of its case; a case's pairs weigh 1 together."""
    out: list[tuple[float, list[float]]] = []
    for case in sorted(cases, key=lambda c: str(c["id"])):
        gold = set(case["gold"])
        candidates = case["candidates"][:depth]
        golds = [c for c in case["candidates"] if c["path"] in gold]
        others = [c for c in candidates if c["path"] not in gold]
        diffs = [
            [a - b for a, b in zip(_vector(g, names), _vector(o, names), strict=True)]
            for g in golds
            for o in others
        ]
        out.extend((1.0 / len(diffs), d) for d in diffs)
    return out


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (the matrix is positive definite)."""
    n = len(rhs)
    a = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            for c in range(col, n + 1):
                a[r][c] -= f * a[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def fit(
    cases: Sequence[Case],
    names: Sequence[str] = FEATURES,
    *,
    l2: float = 1.0,
    depth: int = 30,
    prior: Mapping[str, float] = TODAY_WEIGHTS,
) -> dict[str, float]:
    """The weights minimising the pairwise logistic loss plus ``l2 / 2 * |w - prior|^2``."""
    data = pairs(cases, names, depth)
    w0 = [float(prior.get(n, 0.0)) for n in names]
    w = w0[:]
    n = len(names)
    for _ in range(MAX_NEWTON_STEPS):
        grad = [l2 * (w[i] - w0[i]) for i in range(n)]
        hess = [[l2 if i == j else 0.0 for j in range(n)] for i in range(n)]
        for weight, d in data:
            p = _sigmoid(sum(wi * di for wi, di in zip(w, d, strict=True)))
            g, h = weight * (p - 1.0), weight * p * (1.0 - p)
            for i in range(n):
                if d[i] == 0.0:
                    continue
                grad[i] += g * d[i]
                for j in range(n):
                    hess[i][j] += h * d[i] * d[j]
        step = _solve(hess, grad)
        w = [wi - si for wi, si in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < NEWTON_TOLERANCE:
            break
    return {name: round(value, WEIGHT_DIGITS) for name, value in zip(names, w, strict=True)}


def ranked(case: Case, weights: Mapping[str, float] | None) -> list[str]:
    """The case's captured candidates by their hand-set score (``None``) or by ``weights``, as
    the pack orders them: the best first, the others by their promoted score."""
    scored = [
        (
            c["score"]
            if weights is None
            else sum(weights.get(k, 0.0) * v for k, v in c["x"].items()),
            float(c.get("promotion", 1.0)),
            str(c["path"]),
        )
        for c in case["candidates"]
    ]
    if not scored:
        return []
    first = min(scored, key=lambda s: (-s[0], s[2]))
    rest = sorted((s for s in scored if s is not first), key=lambda s: (-s[0] * s[1], s[2]))
    return [first[2], *(s[2] for s in rest)]


def scores(case: Case, weights: Mapping[str, float] | None) -> tuple[float, float]:
    order = ranked(case, weights)
    return recall_at(order, case["gold"], 1), recall_at(order, case["gold"], 6)


def lopo(cases: Sequence[Case], **options: Any) -> dict[str, dict[str, float]]:
    """Weights per repository, each fit on every other repository's cases."""
    repos = sorted({str(c["repo"]) for c in cases})
    return {repo: fit([c for c in cases if c["repo"] != repo], **options) for repo in repos}


def report(cases: Sequence[Case], by_repo: Mapping[str, Mapping[str, float]]) -> None:
    rows = [(c, scores(c, None), scores(c, by_repo[str(c["repo"])])) for c in cases]
    for split in sorted({str(c["split"]) for c in cases}):
        part = [r for r in rows if r[0]["split"] == split]
        n = len(part)
        gained = sum(r[2][0] > r[1][0] for r in part)
        lost = sum(r[2][0] < r[1][0] for r in part)
        before1, after1 = sum(r[1][0] for r in part) / n, sum(r[2][0] for r in part) / n
        before6, after6 = sum(r[1][1] for r in part) / n, sum(r[2][1] for r in part) / n
        print(
            f"{split:8} n={n:3}  r@1 {before1:.3f} -> {after1:.3f}  r@6 {before6:.3f} -> "
            f"{after6:.3f}  first gained {gained} lost {lost}"
        )
    per_repo: dict[str, list[float]] = {}
    for case, before, after in rows:
        d = per_repo.setdefault(str(case["repo"]), [0.0, 0.0, 0.0])
        d[0] += after[0] - before[0]
        d[1] += after[1] - before[1]
        d[2] += 1
    print("worst projects (r@1 cases net, r@6 net, n):")
    for repo, (d1, d6, n) in sorted(per_repo.items(), key=lambda kv: (kv[1][0], kv[1][1]))[:6]:
        print(f"  {repo:32} {d1:+.1f} {d6:+.2f} {int(n)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("features", type=Path)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--depth", type=int, default=30)
    parser.add_argument("--prior", choices=("today", "zero"), default="today")
    parser.add_argument("--drop", action="append", default=[], help="leave a feature out")
    parser.add_argument("--lopo-out", type=Path)
    parser.add_argument("--weights-out", type=Path)
    args = parser.parse_args(argv)
    cases = json.loads(args.features.read_text())
    names = [n for n in FEATURES if n not in set(args.drop)]
    prior = TODAY_WEIGHTS if args.prior == "today" else {}
    options = {"names": names, "l2": args.l2, "depth": args.depth, "prior": prior}
    by_repo = lopo(cases, **options)
    report(cases, by_repo)
    weights = fit(cases, **options)
    print("all cases:", json.dumps(weights))
    if args.lopo_out:
        args.lopo_out.write_text(json.dumps({"by_repo": by_repo}, indent=1))
    if args.weights_out:
        args.weights_out.write_text(json.dumps(weights, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
