"""Full-text BM25 over a clone's source files, with identifier-aware tokens.

Why: a ticket's prose names its topic in words the seeds drop (``retry``, ``timeout``,
``encoding``), and BM25 over whole files with the full ticket as the query is the strongest
plain baseline there is (SWE-bench's retrieval setting). The pack blends this ranking with the
seed evidence instead of competing with it.

Terms are identifier-aware: ``NetRCAuth.__init__`` gives ``netrcauth``, ``net``, ``rc``,
``auth``, ``init`` — the whole identifier (what a traceback or a paste carries) and its parts
(what prose says).

Why the scoring is written here rather than taken from ``rank_bm25`` (which the benchmark uses
for its anchor): the pack has two seconds on a 2,000-file project, and a general index must
expand every identifier of every file into its parts (a million Python-level steps) and, in
``rank_bm25``, import numpy (a third of a second) and scan every document once per query term.
Here each file is only ``Counter(identifiers)`` (C speed), and the expansion into parts is done
once per distinct identifier of the whole tree and only for the ticket's terms, at query time.
The formula is Okapi BM25 (k1 = 1.5, b = 0.75, Lucene's non-negative idf); document length is
the file's identifier count.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from veranda_dagster.domain.core.bounds import MAX_EXTRACT_TEXT_CHARS, MAX_FULL_TEXT_FILES

K1 = 1.5
B = 0.75
IDENT = re.compile(r"[A-Za-z0-9_]+")
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
    parts = token.split("_") if token.islower() or token.isdigit() else _PART.findall(token)
    for part in parts:
        low = part.lower()
        if len(low) > 1 and low != whole:
            terms.append(low)
    return tuple(terms)


def term_counts(text: str) -> Counter[str]:
    """Identifier-aware term frequencies of ``text``."""
    counts: Counter[str] = Counter()
    for token, n in Counter(IDENT.findall(text)).items():
        for term in identifier_terms(token):
            counts[term] += n
    return counts


def query_terms(text: str) -> Counter[str]:
    """The ticket as a query: every identifier-aware term, repeats counted (BM25's query tf)."""
    return term_counts(text[:MAX_EXTRACT_TEXT_CHARS])


class FullTextIndex:
    """BM25 over ``(path, text)`` documents; a document is its path and its text, as in
    SWE-bench, so a file named for the topic scores too."""

    def __init__(self, documents: Iterable[tuple[str, str]]) -> None:
        self.paths: list[str] = []
        self._counts: list[Counter[str]] = []
        self._lengths: list[int] = []
        self._vocabulary: set[str] | None = None
        self.term_idf: dict[str, float] = {}
        """The last query's terms found in the tree, with their idf: what the windows use to
        find the lines a ticket talks about."""
        for path, text in documents:
            if not self.add(path, text):
                break

    def add(self, path: str, text: str) -> bool:
        """Index one more document (documents come in path order); ``False``, and nothing
        added, once ``MAX_FULL_TEXT_FILES`` are held. Lets a caller that streams the tree for
        another reason (``LocalGitGrep.prefetch``) build the index in the same pass."""
        if len(self.paths) >= MAX_FULL_TEXT_FILES:
            return False
        tokens = IDENT.findall(f"{path}\n{text}")
        self.paths.append(path)
        self._counts.append(Counter(tokens))
        self._lengths.append(len(tokens))
        self._vocabulary = None
        return True

    @property
    def _avgdl(self) -> float:
        return sum(self._lengths) / max(1, len(self._lengths))

    def _raw_for(self, query: Counter[str]) -> dict[str, list[str]]:
        """Each identifier of the tree that carries a query term -> the query terms it carries."""
        if self._vocabulary is None:
            self._vocabulary = set().union(*self._counts)
        carriers: dict[str, list[str]] = {}
        for raw in self._vocabulary:
            found = [t for t in identifier_terms(raw) if t in query]
            if found:
                carriers[raw] = found
        return carriers

    def rank(self, query: Counter[str]) -> list[tuple[str, float]]:
        """Files with a positive score, best first (ties by path)."""
        if not self.paths or not query:
            return []
        carriers = self._raw_for(query)
        wanted = set(carriers)
        per_doc: list[dict[str, int]] = []
        doc_freq: Counter[str] = Counter()
        for counts in self._counts:
            tf: dict[str, int] = {}
            for raw in counts.keys() & wanted:
                for term in carriers[raw]:
                    tf[term] = tf.get(term, 0) + counts[raw]
            per_doc.append(tf)
            doc_freq.update(tf.keys())
        total = len(self.paths)
        idf = {t: math.log(1.0 + (total - df + 0.5) / (df + 0.5)) for t, df in doc_freq.items()}
        self.term_idf = idf
        scored: list[tuple[float, str]] = []
        avgdl = self._avgdl
        for path, tf, length in zip(self.paths, per_doc, self._lengths, strict=True):
            if not tf:
                continue
            norm = K1 * (1.0 - B + B * length / avgdl)
            score = sum(query[t] * idf[t] * n * (K1 + 1.0) / (n + norm) for t, n in tf.items())
            scored.append((score, path))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [(path, score) for score, path in scored if score > 0]
