"""Full-text BM25 over a clone's source files, with identifier-aware tokens.

Why: a ticket's prose names its topic in words the seeds drop (``retry``, ``timeout``,
``encoding``), and BM25 over whole files with the full ticket as the query is the strongest
plain baseline there is (SWE-bench's retrieval setting). The pack blends this ranking with the
seed evidence instead of competing with it.

Tokens are identifier-aware: ``NetRCAuth.__init__`` gives ``netrcauth``, ``net``, ``rc``,
``auth``, ``init`` — the whole identifier (what a traceback or a paste carries) and its parts
(what prose says). Scoring is ``rank_bm25.BM25Okapi``; only the counting is ours, because the
library's per-token Python loop costs a second on a 2,000-file project while ``Counter`` over
the raw identifiers and a memo of their parts costs a fraction of that.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

import numpy as np
from rank_bm25 import BM25Okapi

from veranda_dagster.domain.bounds import MAX_EXTRACT_TEXT_CHARS, MAX_FULL_TEXT_FILES

_IDENT = re.compile(r"[A-Za-z0-9_]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")
_SOURCE_SUFFIXES_TEXT = (
    "py pyi pyx go rs js jsx ts tsx mjs cjs vue svelte java kt kts scala rb php cs c h cc cpp hpp"
    " m swift lua ex exs erl dart jl sh bash"
)
SOURCE_SUFFIXES = frozenset(_SOURCE_SUFFIXES_TEXT.split())
"""What the index holds: program text, where fixes go; docs and data are left to the seeds."""


@lru_cache(maxsize=200_000)
def identifier_terms(token: str) -> tuple[str, ...]:
    """The whole identifier lowercased, then its camelCase/snake_case parts; one-letter terms
    are dropped. Memoised: a codebase repeats its identifiers."""
    whole = token.lower().strip("_")
    terms = [whole] if len(whole) > 1 else []
    for part in _PART.findall(token):
        low = part.lower()
        if len(low) > 1 and low != whole:
            terms.append(low)
    return tuple(terms)


def term_counts(text: str) -> Counter[str]:
    """Identifier-aware term frequencies of ``text``."""
    counts: Counter[str] = Counter()
    for token, n in Counter(_IDENT.findall(text)).items():
        for term in identifier_terms(token):
            counts[term] += n
    return counts


def query_terms(text: str) -> Counter[str]:
    """The ticket as a query: every identifier-aware term, repeats counted (BM25's query tf)."""
    return term_counts(text[:MAX_EXTRACT_TEXT_CHARS])


def is_source_path(path: str) -> bool:
    return path.rsplit(".", 1)[-1].lower() in SOURCE_SUFFIXES if "." in path else False


class _CountedBM25(BM25Okapi):
    """``BM25Okapi`` initialised from term counts rather than token lists (same statistics)."""

    def _initialize(self, corpus: Iterable[Counter[str]]) -> dict[str, int]:  # type: ignore[override]
        doc_count: Counter[str] = Counter()
        total = 0
        for counts in corpus:
            length = sum(counts.values())
            self.doc_len.append(length)
            total += length
            self.doc_freqs.append(counts)
            doc_count.update(counts.keys())
            self.corpus_size += 1
        self.avgdl = total / max(1, self.corpus_size)
        return dict(doc_count)


class FullTextIndex:
    """BM25 over ``(path, text)`` documents; the document is the path and the text, as in
    SWE-bench, so a file named for the topic scores too."""

    def __init__(self, documents: Iterable[tuple[str, str]]) -> None:
        self.paths: list[str] = []
        counts: list[Counter[str]] = []
        for path, text in documents:
            if len(self.paths) >= MAX_FULL_TEXT_FILES:
                break
            self.paths.append(path)
            counts.append(term_counts(f"{path}\n{text}"))
        self._bm25 = _CountedBM25(counts) if counts else None

    def idf(self, term: str) -> float:
        return float(self._bm25.idf.get(term, 0.0)) if self._bm25 else 0.0

    def rank(self, query: Counter[str]) -> list[tuple[str, float]]:
        """Files with a positive score, best first (ties by path)."""
        if self._bm25 is None or not query:
            return []
        scores = np.zeros(len(self.paths))
        for term, n in query.items():
            if term in self._bm25.idf:
                scores += n * self._bm25.get_scores([term])
        ranked = sorted(zip(scores.tolist(), self.paths, strict=True), key=lambda x: (-x[0], x[1]))
        return [(path, score) for score, path in ranked if score > 0]
