"""The pack's windows and its byte budget: which lines of a chosen file are packed, and how the
12,000 bytes are shared among the six files.

A file's windows go first to its strong lines (definitions of matched symbols, traceback frames,
linked lines, message literals, the span the ticket's words are densest in) as the whole
function when it fits, then to plain hit lines as 12-line windows. The budget is spent
round-robin (``spend_budget``) so one long file cannot starve the others, and never split so
thin that no window holds a whole function body.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from veranda_dagster.domain.context.code_search import CodeSearch, split_lines
from veranda_dagster.domain.context.full_text import IDENT, identifier_terms
from veranda_dagster.domain.context.function_spans import enclosing_function
from veranda_dagster.domain.core.bounds import (
    MAX_FUNCTION_WINDOW_BYTES,
    MAX_WINDOWS_PER_FILE,
    SEARCH_WINDOW_LINES,
)
from veranda_dagster.domain.core.models import Window

TOPIC_VALUE = 0.3
"""The topic span ranks after a file's definitions and frames, before its plain hit lines."""
MAX_TOPIC_SCAN_LINES = 5_000
"""Lines of a file scanned for the ticket's words when only the full-text ranking chose it."""


@dataclass
class FileEvidence:
    """A file's evidence in the ranking: its score and the lines worth a window."""

    path: str
    score: float = 0.0
    lines: dict[int, float] = field(default_factory=dict)
    """Hit line -> its value: the best weight of a seed hitting it (more for a definition)."""
    head: float = 0.0
    """A path hit's value: the file head is its window only when nothing in the file hit."""
    strong: set[int] = field(default_factory=set)
    """Lines that define a matched symbol, are named by a traceback frame or raise a quoted
    message: their whole function is packed when it fits."""


def _merge(a: Window, b: Window) -> Window:
    lines = dict(enumerate(split_lines(a.text), start=a.start))
    for number, text in enumerate(split_lines(b.text), start=b.start):
        lines.setdefault(number, text)
    start, end = min(a.start, b.start), max(a.end, b.end)
    text = "".join(lines.get(n, "") for n in range(start, end + 1))
    return Window(start=start, end=end, text=text)


@dataclass
class _Candidate:
    """One window to pay for: ``window`` (a whole function when ``short`` is set), and the
    12-line ``short`` window at its anchor to fall back on when the function does not fit."""

    window: Window
    value: float
    short: Window | None = None


def _function_window(lines: list[str], line: int) -> Window | None:
    span = enclosing_function(lines, line)
    if span is None:
        return None
    text = "".join(lines[span[0] - 1 : span[1]])
    if utf8_len(text) > MAX_FUNCTION_WINDOW_BYTES:
        return None
    return Window(start=span[0], end=span[1], text=text)


def _topic_line(lines: list[str], weights: dict[str, float]) -> int | None:
    """The line the ticket talks about most: inside the ``SEARCH_WINDOW_LINES``-line span whose
    lines carry the most ticket words (each weighted by its rarity in the tree, counted once per
    line), the line carrying the most. ``None`` when no line carries any."""
    scores: list[float] = []
    for text in lines[:MAX_TOPIC_SCAN_LINES]:
        terms = {t for raw in set(IDENT.findall(text)) for t in identifier_terms(raw)}
        scores.append(sum(weights.get(t, 0.0) for t in terms))
    if not scores or max(scores) <= 0:
        return None
    span = min(SEARCH_WINDOW_LINES, len(scores))
    running = sum(scores[:span])
    best, best_start = running, 0
    for start in range(1, len(scores) - span + 1):
        running += scores[start + span - 1] - scores[start - 1]
        if running > best:
            best, best_start = running, start
    inside = scores[best_start : best_start + span]
    return best_start + inside.index(max(inside)) + 1


def file_windows(
    ev: FileEvidence, search: CodeSearch, weights: dict[str, float] | None = None
) -> list[_Candidate]:
    """A file's windows, best first: the strong lines (definitions, frames, messages) before
    plain hit lines, each by value; around a strong line the whole function when the backend
    has the file's text and the body is at most ``MAX_FUNCTION_WINDOW_BYTES``. With the
    ticket's term ``weights`` the span the ticket talks about most (``_topic_line``) is a strong
    line too: a fix often edits the function whose body uses the report's words. Overlapping or
    adjacent windows merge; at most ``MAX_WINDOWS_PER_FILE``."""
    file_text = getattr(search, "file_text", None)
    lines = file_text(ev.path) if callable(file_text) else None
    anchors = dict(ev.lines)
    if lines and weights and (topic := _topic_line(lines, weights)) and topic not in anchors:
        anchors[topic] = TOPIC_VALUE
        ev.strong.add(topic)
    if not anchors:
        anchors[1] = ev.head
    ordered = sorted(
        anchors.items(), key=lambda item: (item[0] not in ev.strong, -item[1], item[0])
    )
    scored: list[_Candidate] = []
    for line, value in ordered[: MAX_WINDOWS_PER_FILE * 4]:
        if any(c.window.start <= line <= c.window.end for c in scored):
            continue
        short = search.read_window(ev.path, line)
        whole = _function_window(lines, line) if lines and line in ev.strong else None
        window = whole if whole is not None else short
        for i, other in enumerate(scored):
            if window.start <= other.window.end + 1 and other.window.start <= window.end + 1:
                merged = _merge(other.window, window)
                scored[i] = _Candidate(merged, max(value, other.value), other.short or short)
                break
        else:
            if len(scored) >= MAX_WINDOWS_PER_FILE:
                break
            scored.append(_Candidate(window, value, short if window is not short else None))
    return scored


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def truncate_window(window: Window, budget: int) -> Window | None:
    """The window cut to at most ``budget`` bytes: whole lines first, then the next line's prefix
    (cut on a character boundary) so the budget is filled exactly. ``None`` if nothing fits."""
    kept: list[str] = []
    used = 0
    for line in split_lines(window.text):
        size = utf8_len(line)
        if used + size <= budget:
            kept.append(line)
            used += size
            continue
        prefix = line.encode("utf-8")[: budget - used].decode("utf-8", errors="ignore")
        if prefix:
            kept.append(prefix)
        break
    if not kept:
        return None
    end = window.start + len(kept) - 1
    return Window(start=window.start, end=end, text="".join(kept))


def spend_budget(
    candidates: list[tuple[str, list[_Candidate]]], max_bytes: int
) -> dict[str, list[Window]]:
    """Spend the byte budget: every file's best window first, in rank order, then second
    windows, and so on, so one long file cannot starve the other five. A first window is capped
    at an equal share of the budget, except a whole function, which may take up to
    ``MAX_FUNCTION_WINDOW_BYTES`` as long as every later file can still have its 12-line first
    window: so the budget is never split so thin that no window holds a whole function body. A
    function that does not fit falls back to its 12-line window; the window that would cross
    the ceiling is truncated to fit exactly."""
    kept: dict[str, list[Window]] = {path: [] for path, _ in candidates}
    remaining = max_bytes
    fair_share = max_bytes // max(1, len(candidates))
    firsts = [
        min(fair_share, utf8_len((c[0].short or c[0].window).text)) if c else 0
        for _, c in candidates
    ]
    for k in range(MAX_WINDOWS_PER_FILE):
        for i, (path, windows) in enumerate(candidates):
            if k >= len(windows) or remaining <= 0:
                continue
            cand = windows[k]
            reserve = sum(firsts[i + 1 :]) if k == 0 else 0
            size = utf8_len(cand.window.text)
            if cand.short is not None and size <= remaining - reserve:
                fitted: Window | None = cand.window
            else:
                window = cand.short or cand.window
                cap = min(remaining, fair_share) if k == 0 else remaining
                fitted = window if utf8_len(window.text) <= cap else truncate_window(window, cap)
            if fitted is None or not fitted.text:
                continue
            kept[path].append(fitted)
            remaining -= utf8_len(fitted.text)
    return kept
