"""The bounded retrieval pack: at most 12 searches, 6 files and 12,000 bytes, exact and enforced.

The pack is bounded in bytes, not tokens: ``bytes`` is the UTF-8 length of every window's text
summed (paths, ids and JSON framing are not counted), so the cap is exact and free to enforce
and means the same thing for every vendor.

Searches go to the seeds first, in rank order, and the first ``MAX_SEEDS`` candidates that hit
are the pack's seeds (a name that matches nothing gives its slot to the next); the budget they
leave funds a relaxed variant of a seed (``client.get_user`` -> ``get_user``, to reach the
definition) and then plain ticket words at half weight, so a ticket that names no identifier
still finds its topic. Ranking decides which files and windows earn the bytes. A file scores the
sum, over the distinct seeds that hit it, of the seed's weight: earlier seeds (the ones a person
backticked or named as a path) weigh more, and a seed that hits few files weighs more than one
that hits many (an inverse document frequency). A line that *defines* the seed (``def x``,
``class X``, ``func X``, ``X =``) doubles that seed's share, and a file whose path matches a
path seed (or a dotted module name: ``rich.panel`` -> ``rich/panel.py``) gets a bonus, its
rarity counted among the path hits alone, because the file that defines or is named by an
identifier is where a fix usually goes. Tests, docs and vendored code are discounted
(``path_kinds.py``). The byte budget is then spent round-robin (``pack_windows.py``): every
chosen file's best window first, then second windows, so one long file cannot starve the other
five; the window that would cross the ceiling is truncated to fit exactly.

Every window becomes a ``Citation`` ``R1..Rn`` (path, line range, commit sha) here, in reading
order, and nowhere else: the set the agent may cite is closed by construction.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from veranda_dagster.domain.context.code_search import CodeSearch, Hit, looks_like_path
from veranda_dagster.domain.context.module_docstring import module_docstring_end
from veranda_dagster.domain.context.pack_promotion import (
    definer_over_importer,
    definer_over_reexport,
    keep_full_text_share,
    named_callee_first,
    promote_imported,
)
from veranda_dagster.domain.context.pack_signals import (
    FULL_TEXT_WEIGHT,
    MESSAGE_WEIGHT,
    TicketEvidence,
    gather,
)
from veranda_dagster.domain.context.pack_windows import (
    FileEvidence,
    file_windows,
    spend_budget,
    utf8_len,
    widen_windows,
)
from veranda_dagster.domain.context.path_kinds import (
    DOCS_FACTOR,
    language_factor,
    path_factor,
    tooling_factor,
)
from veranda_dagster.domain.context.seeds import MIN_SEED_LEN, PROSE_WORDS, relaxed_variant
from veranda_dagster.domain.core.bounds import (
    MAX_PACK_BYTES,
    MAX_PACK_FILES,
    MAX_SEARCHES,
    MAX_SEEDS,
)
from veranda_dagster.domain.core.models import Citation, PackFile

DEFINITION_BONUS = 1.0
PATH_MATCH_BONUS = 1.5
KEYWORD_WEIGHT = 0.5
"""A plain ticket word is weaker evidence than an identifier someone typed."""
IMPORT_FACTOR = 0.3
"""A hit on an import line says the file uses the name, not that the fix goes there: a
package's ``__init__`` re-exports every public name."""
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+[\w.]+\s+import\b|import\s+\w)")
RANK_DECAY = 0.06
"""Weight lost per seed rank: the first seed weighs 1.0, the eighth 0.58."""
NOISE_IDF = math.log(2.0)
"""A seed whose full-text idf is below this is in more than half of the tree's source files
(Lucene's idf, ``log(1 + (N - df + 0.5) / (df + 0.5))``): an interpreter banner's ``Python``,
a builtin exception's name. It says nothing about where the fix goes."""
NOISE_FACTOR = 0.1
"""What a noise seed still weighs: enough to break ties, too little to rank a file."""
_SINGLE_IDENT = re.compile(r"[A-Za-z_]\w*")


def noise_seeds(results: list[SearchResult], term_idf: dict[str, float]) -> set[str]:
    """The searched seeds that are one identifier found in most of the tree's source files
    (``NOISE_IDF``), by the full-text index's idf; none without the index."""
    return {
        r.query
        for r in results
        if _SINGLE_IDENT.fullmatch(r.query)
        and term_idf.get(r.query.lower().strip("_"), NOISE_IDF) < NOISE_IDF
    }


def boilerplate_seeds(results: list[SearchResult], signals: TicketEvidence) -> set[str]:
    """The searched seeds the ticket writes only in its boilerplate (an issue template's task
    list, the reporter's environment block: ``report_boilerplate``): ``x86_64`` from a platform
    line, a search site's name from a ticked box. Like a seed in most files, it says nothing
    about where the fix goes."""
    return {
        r.query
        for r in results
        if r.seed is not None
        and r.query.lower() in signals.boilerplate_text
        and r.query.lower() not in signals.report_text
    }


class RetrievalResult(BaseModel):
    files: list[PackFile] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    searches: int = 0
    bytes: int = 0
    """UTF-8 length of all window texts, summed."""
    seeds: list[str] = Field(default_factory=list)
    """The seeds that hit, at most ``MAX_SEEDS``, in rank order: what the pack was built from."""
    unavailable: list[str] = Field(default_factory=list)
    """Ticket signals the search index could not provide (a forge's hosted index with no clone: the
    full-text ranking, traceback frames and source links), so a reader knows what the ranking
    lacked."""


def _definition_pattern(seed: str) -> re.Pattern[str] | None:
    names = re.findall(r"[A-Za-z_]\w*", seed)
    if not names:
        return None
    name = re.escape(names[-1])
    return re.compile(
        rf"^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?"
        rf"(?:def|class|func|fn|function|interface|type|struct|enum|trait|const|let|var|module"
        rf"|message|service)\s+(?:\([^)]*\)\s*)?{name}\b"
        rf"|^\s*{name}\s*(?::[^=]*)?=(?!=)"
    )


@dataclass
class SearchResult:
    query: str
    rank: int
    """The rank of the seed it came from (a relaxed variant keeps its seed's rank)."""
    hits: list[Hit]
    weight: float = 1.0
    seed: str | None = None
    """The candidate seed this search was for (``None`` for a relaxed variant or a word)."""
    strong: bool = False
    """Every hit line is where the fix may go (an error message's literal)."""


def run_searches(
    seeds: list[str],
    search: CodeSearch,
    max_searches: int,
    keywords: list[str] | None = None,
    max_seeds: int = MAX_SEEDS,
) -> list[SearchResult]:
    """Search ``seeds`` (ranked candidates) in order, at most ``max_searches`` times, until
    ``max_seeds`` of them have hit: a candidate that matches nothing in the tree (a local name
    from a user's snippet) gives its slot to the next one. A candidate with no hits queues its
    relaxed variant (``a.b.get_user`` -> ``get_user``) right behind the seeds; one that did hit
    queues it after them, so leftover budget can still find where a qualified name is defined;
    ``keywords`` (plain ticket words) take whatever budget is left, at lower weight."""
    candidates = list(seeds)
    queue: list[tuple[str, int]] = []
    later: list[tuple[str, int]] = []
    words = [
        (w, min(len(seeds), max_seeds) + i) for i, w in enumerate(keywords or []) if w not in seeds
    ]
    seen = set(seeds)
    results: list[SearchResult] = []
    accepted = 0
    while len(results) < max_searches:
        if candidates and accepted < max_seeds:
            seed, rank, kind = candidates.pop(0), accepted, "seed"
        elif queue or later:
            (seed, rank), kind = (queue or later).pop(0), "variant"
        elif words:
            (seed, rank), kind = words.pop(0), "word"
        else:
            break
        hits = search.search(seed)
        weight = KEYWORD_WEIGHT if kind == "word" else 1.0
        results.append(SearchResult(seed, rank, hits, weight, seed if kind == "seed" else None))
        if kind == "seed" and hits:
            accepted += 1
        variant = None if kind == "word" else relaxed_variant(seed)
        if variant and variant not in seen:
            seen.add(variant)
            (later if hits else queue).append((variant, rank))
    return results


def used_seeds(results: list[SearchResult], max_seeds: int = MAX_SEEDS) -> list[str]:
    """The seeds that found something, in rank order: the ones the pack was built from."""
    return [r.seed for r in results if r.seed is not None and r.hits][:max_seeds]


def strongest_seed_name(results: list[SearchResult]) -> str | None:
    """The last identifier of the best-ranked seed that hit (``web.Response`` -> ``Response``):
    the name the ticket puts first, as a definition would spell it."""
    for r in sorted(results, key=lambda r: r.rank):
        if r.seed is not None and r.hits and (found := _SINGLE_IDENT.findall(r.seed)):
            return str(found[-1])
    return None


def qualified_names(results: list[SearchResult]) -> list[tuple[str, str]]:
    """``(qualifier, name)``, the last two identifiers of every qualified seed that hit
    (``nx.nx_agraph.to_agraph`` -> ``("nx_agraph", "to_agraph")``), in rank order: the calls
    the ticket writes, which a file's windows place on their definitions."""
    pairs: list[tuple[str, str]] = []
    for r in sorted(results, key=lambda r: r.rank):
        if r.seed is None or not r.hits:
            continue
        found = _SINGLE_IDENT.findall(r.seed)
        if len(found) >= 2 and (pair := (found[-2], found[-1])) not in pairs:
            pairs.append(pair)
    return pairs


def seed_names(results: list[SearchResult]) -> set[str]:
    """The last identifier of every searched seed that hit (``client.get_user`` -> ``get_user``):
    the names the ticket gives, as a definition would spell them."""
    names: set[str] = set()
    for r in results:
        if r.seed is not None and r.hits and (found := _SINGLE_IDENT.findall(r.seed)):
            names.add(found[-1])
    return names


def _idf(files: int) -> float:
    """Rarer is stronger: 1.0 for one file, about 0.22 for 35."""
    return 1.0 / (1.0 + math.log(max(1, files)))


FileLines = Callable[[str], list[str] | None]


class DocstringLines:
    """Whether a hit line is in its Python file's module docstring, each file read once."""

    def __init__(self, file_text: FileLines | None) -> None:
        self.file_text = file_text
        self.ends: dict[str, int] = {}

    def __call__(self, path: str, line: int) -> bool:
        if self.file_text is None or not path.endswith((".py", ".pyi")):
            return False
        if path not in self.ends:
            self.ends[path] = module_docstring_end(self.file_text(path) or [])
        return 0 < line <= self.ends[path]


def rank_files(
    results: list[SearchResult],
    signals: TicketEvidence | None = None,
    file_text: FileLines | None = None,
) -> list[FileEvidence]:
    """Files by score, best first; ties broken by path so the same inputs give the same pack.

    A seed in most of the tree's source files (``noise_seeds``), or written only in the
    report's boilerplate (``boilerplate_seeds``), weighs ``NOISE_FACTOR`` of its share. A path
    hit's rarity is counted among the path hits alone: ``rich.panel`` names one file
    (``rich/panel.py``) even though 35 files import it, and the importers must not dilute it.
    With the search index's ``file_text``, a hit in a Python module's docstring is documentation
    (``DOCS_FACTOR``, never a definition): a package ``__init__`` whose docstring lists every
    class it exports must not outrank the modules defining them."""
    evidence: dict[str, FileEvidence] = {}
    noise: set[str] = set()
    if signals is not None:
        noise = noise_seeds(results, signals.term_weights) | boilerplate_seeds(results, signals)
    in_docstring = DocstringLines(file_text)
    for result in results:
        if not result.hits:
            continue
        files_hit = {h.path for h in result.hits}
        path_files = {h.path for h in result.hits if h.kind == "path"}
        rank_weight = max(0.1, 1.0 - RANK_DECAY * result.rank) * result.weight
        if result.query in noise:
            rank_weight *= NOISE_FACTOR
        weight = rank_weight * _idf(len(files_hit))
        path_weight = rank_weight * _idf(len(path_files))
        literal = looks_like_path(result.query) or result.strong
        pattern = None if literal else _definition_pattern(result.query)
        best: dict[str, float] = defaultdict(float)
        for hit in result.hits:
            strong = result.strong
            if hit.kind == "path":
                value = path_weight * PATH_MATCH_BONUS
            elif in_docstring(hit.path, hit.line):
                value, strong = weight * DOCS_FACTOR, False
            elif pattern is not None and pattern.search(hit.text):
                value, strong = weight * (1.0 + DEFINITION_BONUS), True
            else:
                value = weight * (IMPORT_FACTOR if _IMPORT_LINE.match(hit.text) else 1.0)
            ev = evidence.setdefault(hit.path, FileEvidence(hit.path))
            if hit.kind == "path":
                ev.head = max(ev.head, value)
            else:
                ev.lines[hit.line] = max(ev.lines.get(hit.line, 0.0), value)
            if strong and hit.kind != "path":
                ev.strong.add(hit.line)
            best[hit.path] = max(best[hit.path], value)
        for path, value in best.items():
            evidence[path].score += value
    main_language = None
    if signals is not None:
        _add_signals(evidence, signals)
        main_language = signals.main_language
    for ev in evidence.values():
        factor = path_factor(ev.path) * tooling_factor(ev.path)
        ev.score *= min(factor, language_factor(ev.path, main_language))
    return sorted(evidence.values(), key=lambda e: (-e.score, e.path))


def _add_signals(evidence: dict[str, FileEvidence], signals: TicketEvidence) -> None:
    """Frames, linked lines, full-text scores and modules named in prose join the seed evidence
    (messages came in as searches). A file with several frames, or linked several times,
    counts once, at its strongest: a traceback passing through one file's helpers four times is
    one report of that file, not four, and must not outweigh the deepest frame of another; each
    frame and linked line is still an anchor. A module named in prose weighs like a path seed
    naming one file."""
    framed: dict[str, float] = {}
    for frame in signals.frames:
        ev = evidence.setdefault(frame.path, FileEvidence(frame.path))
        framed[frame.path] = max(framed.get(frame.path, 0.0), frame.weight)
        ev.lines[frame.line] = max(ev.lines.get(frame.line, 0.0), frame.weight)
        ev.strong.add(frame.line)
    for path, weight in framed.items():
        evidence[path].score += weight
    linked: dict[str, float] = {}
    for link in signals.links:
        ev = evidence.setdefault(link.path, FileEvidence(link.path))
        linked[link.path] = link.weight
        if link.line > 0:
            ev.lines[link.line] = max(ev.lines.get(link.line, 0.0), link.weight)
            ev.strong.add(link.line)
        else:
            ev.head = max(ev.head, link.weight)
    for path, weight in linked.items():
        evidence[path].score += weight
    for path, share in signals.full_text.items():
        ev = evidence.setdefault(path, FileEvidence(path))
        ev.score += FULL_TEXT_WEIGHT * share
    for path in signals.named_modules:
        ev = evidence.setdefault(path, FileEvidence(path))
        ev.score += PATH_MATCH_BONUS
        ev.head = max(ev.head, PATH_MATCH_BONUS)


def build_pack(
    seeds: list[str],
    search: CodeSearch,
    *,
    max_searches: int = MAX_SEARCHES,
    max_files: int = MAX_PACK_FILES,
    max_bytes: int = MAX_PACK_BYTES,
    keywords: list[str] | None = None,
    max_seeds: int = MAX_SEEDS,
    ticket_text: str | None = None,
) -> RetrievalResult:
    """Search, rank, and spend the byte budget. ``seeds`` may be longer than ``max_seeds``
    (``seed_candidates``): the first ``max_seeds`` that hit are kept and reported in ``seeds``.
    Limits above the bounds are clamped to them. ``ticket_text`` (title and description) adds
    the ticket signals (``pack_signals.py``): frames, error messages and the full-text ranking,
    the last two spending searches from the same ``max_searches``."""
    max_seeds = max(0, min(max_seeds, MAX_SEEDS))
    max_searches = max(0, min(max_searches, MAX_SEARCHES))
    max_files = max(0, min(max_files, MAX_PACK_FILES))
    max_bytes = max(0, min(max_bytes, MAX_PACK_BYTES))
    signals = TicketEvidence()
    if ticket_text:
        signals = gather(ticket_text, search, max_searches)
    results = run_searches(seeds, search, max_searches - signals.searches, keywords, max_seeds)
    results += [
        SearchResult(message, 0, hits, MESSAGE_WEIGHT, strong=True)
        for message, hits in signals.messages
    ]
    file_text = getattr(search, "file_text", None)
    ranked = rank_files(results, signals, file_text if callable(file_text) else None)
    ranked = promote_imported(ranked, search, max_files)
    names = seed_names(results)
    ranked = named_callee_first(ranked, search, names, max_files)
    ranked = definer_over_reexport(ranked, search, names, max_files)
    ranked = definer_over_importer(ranked, search, strongest_seed_name(results), names, max_files)
    chosen = keep_full_text_share(ranked, signals.full_text, max_files)
    weights = {
        t: w
        for t, w in signals.term_weights.items()
        if len(t) >= MIN_SEED_LEN and t not in PROSE_WORDS
    }
    qualified = qualified_names(results)
    candidates = [(ev.path, file_windows(ev, search, weights, qualified)) for ev in chosen]
    kept = spend_budget(candidates, max_bytes)
    if callable(file_text):
        kept = widen_windows(kept, [path for path, _ in candidates], file_text, max_bytes)
    files = [
        PackFile(path=path, windows=sorted(kept[path], key=lambda w: w.start))
        for path, _ in candidates
        if kept[path]
    ]
    citations = [
        Citation(id=f"R{i}", path=f.path, start=w.start, end=w.end, sha=search.sha)
        for i, (f, w) in enumerate(((f, w) for f in files for w in f.windows), start=1)
    ]
    total = sum(utf8_len(w.text) for f in files for w in f.windows)
    return RetrievalResult(
        files=files,
        citations=citations,
        searches=len(results) - len(signals.messages) + signals.searches,
        unavailable=signals.unavailable,
        bytes=total,
        seeds=used_seeds(results, max_seeds),
    )
