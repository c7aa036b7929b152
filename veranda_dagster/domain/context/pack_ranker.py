"""The pack's file score as a weighted sum of named evidence kinds, so its weights can be fitted.

``retrieval.rank_files`` records, for every candidate file, how much of its score came from each
kind of evidence (``FileEvidence.parts``: definition hits, plain hits, import lines, path hits,
frames, the full-text share, ...) and the path discount it got (``FileEvidence.factor``). The
score is ``sum(weight[k] * feature[k])`` over ``features``: with ``TODAY_WEIGHTS`` (every kind
at 1.0, every extra at 0.0) it is the hand-set sum the ranking has always computed, the
constants of ``retrieval.py`` and ``pack_signals.py`` already inside the parts. A weight is a
multiplier of its kind's hand-set share, and an extra (the title's own BM25 share, the number of
searches that hit the file, a package ``__init__``, how much of the path discount to undo) has
no hand-set share at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from veranda_dagster.domain.context.pack_windows import FileEvidence

DEFINITION: Final = "definition"
"""A line defining the seed's last name (``def x``, ``class X``, ``X =``)."""
PLAIN: Final = "plain"
"""Any other line holding a seed."""
IMPORT: Final = "import"
"""An import line holding a seed: the file uses the name."""
DOCSTRING: Final = "docstring"
"""A seed in a Python module's docstring."""
PATH: Final = "path"
"""The file's path matches a path seed or a dotted module name."""
WORD: Final = "word"
"""A plain ticket word's hit (the searches the seeds leave over)."""
MESSAGE: Final = "message"
"""A quoted error message's literal."""
FRAME: Final = "frame"
"""A traceback frame naming the file."""
LINK: Final = "link"
"""A source link naming the file."""
FULL_TEXT: Final = "full_text"
"""The file's share of the full ticket's BM25 ranking."""
PARTS: Final = (DEFINITION, PLAIN, IMPORT, DOCSTRING, PATH, WORD, MESSAGE, FRAME, LINK, FULL_TEXT)
"""The kinds a file's hand-set score is the sum of (before its path factor)."""

TITLE: Final = "title"
"""The file's share of the title's own BM25 ranking (same index, no search), for a file some
search hit: a file only the full text found would rise on the same words twice."""
SEEDS: Final = "seeds"
"""How many searches hit the file (seeds, variants, words, messages)."""
INIT: Final = "init"
"""The file's score when it is a package ``__init__`` (it re-exports what the ticket names)."""
UNDISCOUNTED: Final = "undiscounted"
"""The part of the score the path factor took away: a positive weight softens the factor."""
EXTRAS: Final = (TITLE, SEEDS, INIT, UNDISCOUNTED)
"""Features the hand-set score does not use (weight 0.0 today)."""
FEATURES: Final = PARTS + EXTRAS

TODAY_WEIGHTS: Final[Mapping[str, float]] = {
    **{part: 1.0 for part in PARTS},
    **{extra: 0.0 for extra in EXTRAS},
}
"""The hand-set ranking: each kind at its constant (inside the parts), no extra."""


def features(ev: FileEvidence) -> dict[str, float]:
    """The file's feature vector: each kind's part and each extra, after the path factor (so
    ``TODAY_WEIGHTS`` gives back ``factor * sum(parts)``)."""
    total = sum(ev.parts.get(part, 0.0) for part in PARTS)
    vector = {part: ev.factor * ev.parts.get(part, 0.0) for part in PARTS}
    found = ev.parts.get(SEEDS, 0.0) > 0  # the title orders what the searches found, no more
    vector[TITLE] = ev.factor * ev.parts.get(TITLE, 0.0) if found else 0.0
    vector[SEEDS] = ev.factor * ev.parts.get(SEEDS, 0.0)
    vector[INIT] = ev.factor * total if ev.path.endswith("__init__.py") else 0.0
    vector[UNDISCOUNTED] = (1.0 - ev.factor) * total
    return vector


def weighted_score(ev: FileEvidence, weights: Mapping[str, float]) -> float:
    """``sum(weights[k] * features(ev)[k])``, a missing weight counted as 0.0."""
    return sum(weights.get(name, 0.0) * value for name, value in features(ev).items())


RANKER_WEIGHTS: Final[Mapping[str, float]] = TODAY_WEIGHTS
"""The weights the pack ranks with."""
