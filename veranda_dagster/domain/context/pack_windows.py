"""The pack's windows and its byte budget: which lines of a chosen file are packed, and how the
12,000 bytes are shared among the six files.

A file's windows go first to its strong lines (definitions of matched symbols, traceback frames,
linked lines, message literals, the span the ticket's words are densest in) as the whole
function when it fits, then to plain hit lines as 12-line windows. The budget is spent
round-robin (``spend_budget``) so one long file cannot starve the others, and never split so
thin that no window holds a whole function body.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from veranda_dagster.domain.context.code_search import CodeSearch, split_lines
from veranda_dagster.domain.context.full_text import IDENT, identifier_terms
from veranda_dagster.domain.context.function_spans import class_span, enclosing_function
from veranda_dagster.domain.core.bounds import (
    MAX_FUNCTION_WINDOW_BYTES,
    MAX_WINDOWS_PER_FILE,
    SEARCH_WINDOW_LINES,
)
from veranda_dagster.domain.core.models import Window

TOPIC_VALUE = 0.3
"""The topic span ranks after a file's definitions and frames, before its plain hit lines."""
CALLEE_VALUE = 0.2
"""A function the first window's function calls, defined in the same file: where a fix of the
named function often goes (a helper it delegates to), after the file's own evidence."""
MAX_CALLEE_WINDOWS = 2
"""Same-file callees planned per file: the budget is shared by six files."""
PLAIN_BEFORE_CALLEES = 2
"""Plain hit lines that keep their window ahead of the callees: where the ticket's words are
is evidence, a callee only a guess."""
CLIPPED_FUNCTION_BYTES = MAX_FUNCTION_WINDOW_BYTES // 2
"""Around a strong line in a function too long to pack whole: this much of the function's body
on both sides of the line, so the window reaches the statements a fix would change. More than a
later file's share: only the first two files can pay for it, the others get the 12-line
window."""
CLASS_WINDOW_BYTES: Final = CLIPPED_FUNCTION_BYTES
"""A long class's head window, from the ``class`` line down: the size of a long function's
clip, so only the first two files can pay for it (``spend_budget``)."""
_CALL = re.compile(r"(?<![\w.])(?:self\.|cls\.)?([A-Za-z_]\w*)\s*\(")
_PY_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
_ANY_DEF = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:pub(?:\([\w:]+\))?[ \t]+)?(?:async[ \t]+)?"
    r"(?:def|class|func|fn|function)[ \t]+([A-Za-z_]\w*)"
)
NAMED_DEFINITION_VALUE: Final = 0.5
"""A named definition ranks after the file's definitions of whole seeds (worth at least a seed's
share with the definition bonus), before the topic span and plain hits."""
MAX_NAMED_DEFINITIONS: Final = 2
"""Named definitions planned per file: each is a whole-function window the budget pays for."""
MAX_DEFINITION_SCAN_LINES: Final = 5_000
"""Lines of a file read for the definitions a qualified seed names: a module longer than that
keeps its windows on the search's hits."""
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


def _function_window(lines: list[str], line: int, clip: bool = False) -> Window | None:
    """The whole function around ``line`` when it is at most ``MAX_FUNCTION_WINDOW_BYTES``;
    with ``clip`` a longer one still gives the part of its body around ``line``
    (``_clipped``), so a traceback line deep in a long function is seen with the statements
    around it rather than twelve lines."""
    cls = class_span(lines, line)
    if cls is not None and (head := _class_window(lines, cls, clip)) is not None:
        return head
    span = enclosing_function(lines, line)
    if span is None:
        return None
    text = "".join(lines[span[0] - 1 : span[1]])
    if utf8_len(text) > MAX_FUNCTION_WINDOW_BYTES:
        return _clipped(lines, line, span) if clip else None
    return Window(start=span[0], end=span[1], text=text)


def _class_window(lines: list[str], span: tuple[int, int], clip: bool) -> Window | None:
    """For a strong line on a ``class`` line (``clip``), the class ``span`` from its head down
    to ``CLASS_WINDOW_BYTES`` when the class is longer than that; ``None`` otherwise (the line
    keeps the window it had: 12 lines, or the function a nested class is in). Why: a class is
    laid out head first (docstring, attributes, constructor), and in a long one the 12 lines
    at the ``class`` line show only the docstring, while a ticket naming a class is about how
    it is built or what it does; a short class is mostly inside its 12-line window once
    widened, and packing it whole cost other windows their place (measured: as many edits
    lost as won)."""
    if not clip or utf8_len("".join(lines[span[0] - 1 : span[1]])) <= CLASS_WINDOW_BYTES:
        return None
    end, used = span[0], utf8_len(lines[span[0] - 1])
    while end < span[1] and used + utf8_len(lines[end]) <= CLASS_WINDOW_BYTES:
        used += utf8_len(lines[end])
        end += 1
    return Window(start=span[0], end=end, text="".join(lines[span[0] - 1 : end]))


def _clipped(lines: list[str], line: int, span: tuple[int, int]) -> Window:
    """Lines of the function ``span`` around ``line``, growing one line at a time on each
    side (the side with room) until ``CLIPPED_FUNCTION_BYTES``; bounded by the span."""
    start = end = line
    used = utf8_len(lines[line - 1])
    while used < CLIPPED_FUNCTION_BYTES and (start > span[0] or end < span[1]):
        grew = False
        for side in (-1, 1):
            nxt = start - 1 if side < 0 else end + 1
            if not span[0] <= nxt <= span[1]:
                continue
            size = utf8_len(lines[nxt - 1])
            if used + size > CLIPPED_FUNCTION_BYTES:
                continue
            used += size
            start, end = (nxt, end) if side < 0 else (start, nxt)
            grew = True
        if not grew:
            break
    return Window(start=start, end=end, text="".join(lines[start - 1 : end]))


def same_file_callees(lines: list[str], body: Window, limit: int = MAX_CALLEE_WINDOWS) -> list[int]:
    """Definition lines, in this file, of the functions ``body`` calls (``f(`` or
    ``self.f(``), in call order, at most ``limit``; the body's own definition excluded. Why: a
    ticket names the function it saw fail, and the fix is as often in a helper it calls."""
    defined: dict[str, int] = {}
    for number, text in enumerate(lines, 1):
        m = _PY_DEF.match(text)
        if m and m.group(1) not in defined:
            defined[m.group(1)] = number
    found: list[int] = []
    for text in split_lines(body.text)[1:]:
        for m in _CALL.finditer(text):
            at = defined.get(m.group(1))
            if at is not None and not body.start <= at <= body.end and at not in found:
                found.append(at)
                if len(found) >= limit:
                    return found
    return found


def qualified_definitions(path: str, lines: list[str], pairs: list[tuple[str, str]]) -> list[int]:
    """Lines of ``path`` defining the name of a ``(qualifier, name)`` pair whose qualifier is the
    file's module (``gen`` for ``tornado/gen.py``, the package for an ``__init__``) or a class
    the file defines (the name's definition then inside that class), in the pairs' order, at
    most ``MAX_NAMED_DEFINITIONS``. A name defined more than once in that scope is left out
    (which ``get`` the ticket means is not known). Why: a ticket writes the call it makes
    (``nx_agraph.to_agraph(G)``, ``WaitIterator.next``), and the search finds that text in
    examples and docstrings, not on the ``def`` line where the fix goes."""
    if not pairs:
        return []
    defined: dict[str, list[int]] = {}
    for number, text in enumerate(lines[:MAX_DEFINITION_SCAN_LINES], 1):
        if m := _ANY_DEF.match(text):
            defined.setdefault(m.group(1), []).append(number)
    stem = module_name(path)
    found: list[int] = []
    for qualifier, name in pairs:
        at = defined.get(name, [])
        if qualifier != stem:
            spans = (class_span(lines, line) for line in defined.get(qualifier, []))
            scope = next((span for span in spans if span is not None), None)
            at = [line for line in at if scope is not None and scope[0] < line <= scope[1]]
        if len(at) == 1 and at[0] not in found:
            found.append(at[0])
            if len(found) >= MAX_NAMED_DEFINITIONS:
                break
    return found


def module_name(path: str) -> str:
    """The name a file is imported by: its stem, or its folder's name for an ``__init__``."""
    parts = path.rsplit("/", 2)
    stem = parts[-1].split(".", 1)[0]
    return parts[-2] if stem == "__init__" and len(parts) > 1 else stem


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
    ev: FileEvidence,
    search: CodeSearch,
    weights: dict[str, float] | None = None,
    qualified: list[tuple[str, str]] | None = None,
) -> list[_Candidate]:
    """A file's windows, best first: the strong lines (definitions, frames, messages) before
    plain hit lines, each by value; around a strong line the whole function when the search index
    has the file's text and the body is at most ``MAX_FUNCTION_WINDOW_BYTES``. With the
    ticket's term ``weights`` the span the ticket talks about most (``_topic_line``) is a strong
    line too: a fix often edits the function whose body uses the report's words. Overlapping or
    adjacent windows merge; at most ``MAX_WINDOWS_PER_FILE``. ``qualified``: the ticket's
    qualified seeds as ``(qualifier, name)`` (``nx_agraph.to_agraph``, ``WaitIterator.next``):
    where the qualifier is this file's module or a class it defines, the definition of the name
    is a strong line even when the search matched only the qualified text elsewhere
    (``qualified_definitions``)."""
    file_text = getattr(search, "file_text", None)
    lines = file_text(ev.path) if callable(file_text) else None
    anchors = dict(ev.lines)
    if lines and qualified:
        for at in qualified_definitions(ev.path, lines, qualified):
            anchors.setdefault(at, NAMED_DEFINITION_VALUE)
            ev.strong.add(at)
    if lines and weights and (topic := _topic_line(lines, weights)) and topic not in anchors:
        anchors[topic] = TOPIC_VALUE
        ev.strong.add(topic)
    if not anchors:
        anchors[1] = ev.head
    ordered = sorted(
        anchors.items(), key=lambda item: (item[0] not in ev.strong, -item[1], item[0])
    )
    if lines:
        ordered = _with_callees(lines, ordered, ev.strong)
    scored: list[_Candidate] = []
    placed: list[int] = []
    for line, value in ordered[: MAX_WINDOWS_PER_FILE * 4]:
        if any(c.window.start <= line <= c.window.end for c in scored):
            continue
        short = search.read_window(ev.path, line)
        strong = line in ev.strong
        # the file's first window is a whole function even for a plain hit: the lines a fix
        # changes are rarely within six lines of where the ticket's words are
        first = not scored
        whole = _function_window(lines, line, clip=strong) if lines and (strong or first) else None
        if whole is None and lines:
            whole = _shared_function(lines, line, placed)
        window = whole if whole is not None else short
        placed.append(line)
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


def _shared_function(lines: list[str], line: int, placed: list[int]) -> Window | None:
    """The whole function around the plain hit ``line`` when a line the file already has a
    window for (``placed``) is in it too, and it is at most ``MAX_FUNCTION_WINDOW_BYTES``. Why:
    two separate hits in one function say the ticket is about that function, and the lines a
    fix changes are as often between or after the hits as on them."""
    body = _function_window(lines, line)
    if body is None or not any(body.start <= at <= body.end for at in placed):
        return None
    return body


def _with_callees(
    lines: list[str], ordered: list[tuple[int, float]], strong: set[int]
) -> list[tuple[int, float]]:
    """``ordered`` with the same-file callees of the first strong anchor's function after the
    file's strong anchors and its first ``PLAIN_BEFORE_CALLEES`` plain ones (as strong anchors
    of ``CALLEE_VALUE``), so the function a ticket names comes with the helpers it calls when
    the budget allows."""
    first = next((line for line, _ in ordered if line in strong), None)
    body = _function_window(lines, first) if first is not None else None
    if body is None:
        return ordered
    known = {line for line, _ in ordered}
    callees = [(at, CALLEE_VALUE) for at in same_file_callees(lines, body) if at not in known]
    if not callees:
        return ordered
    strong.update(at for at, _ in callees)
    cut = sum(1 for line, _ in ordered if line in strong) + PLAIN_BEFORE_CALLEES
    return ordered[:cut] + callees + ordered[cut:]


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


LEAD_FILES = 2
"""The first files of the ranking, where the fix usually is: their functions may take beyond
the equal share. Later files get a whole function only within their share (their first
window) or half of it (later windows), so the lead files keep room for their second and third
windows."""


def _schedule(files: int) -> list[tuple[int, int]]:
    """The order windows are paid for, as ``(window index, file index)``: every file's first
    window, then the lead files' later windows round-robin, then the other files' later
    windows round-robin."""
    later = range(1, MAX_WINDOWS_PER_FILE)
    lead = min(files, LEAD_FILES)
    return [
        *((0, i) for i in range(files)),
        *((k, i) for k in later for i in range(lead)),
        *((k, i) for k in later for i in range(lead, files)),
    ]


def spend_budget(
    candidates: list[tuple[str, list[_Candidate]]], max_bytes: int
) -> dict[str, list[Window]]:
    """Spend the byte budget: every file's best window first, in rank order, then the lead
    files' later windows (``LEAD_FILES``: where the fix usually is), then the others' later
    windows (``_schedule``), so one long file cannot starve the other five and the best guess
    still gets the second and third windows that reach an edit. A first window is capped
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
    for k, i in _schedule(len(candidates)):
        path, windows = candidates[i]
        if k >= len(windows) or remaining <= 0:
            continue
        cand = windows[k]
        reserve = sum(firsts[i + 1 :]) if k == 0 else 0
        size = utf8_len(cand.window.text)
        if i >= LEAD_FILES:  # files 3-6: a whole function within their own share
            reserve = max(reserve, remaining - (fair_share if k == 0 else fair_share // 2))
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


MAX_WIDEN_LINES = 12
"""Lines a window may grow on each side with the bytes the budget left over."""


def widen_windows(
    kept: dict[str, list[Window]],
    order: list[str],
    file_lines: Callable[[str], list[str] | None],
    budget: int,
) -> dict[str, list[Window]]:
    """Spend the bytes ``spend_budget`` left over by growing the kept windows one line above
    and one below at a time, round-robin over every window in rank order, at most
    ``MAX_WIDEN_LINES`` a side, never past ``budget`` in all. Why: an edit is often a few lines
    outside the window on the words (the statement above a hit, the end of a function cut to
    fit the share), and unspent bytes show the agent nothing. A window whose text is not its
    file's lines (cut to fit, or a file the index cannot read) is left as it is; windows that
    come to touch merge."""
    remaining = budget - sum(utf8_len(w.text) for ws in kept.values() for w in ws)
    texts = {path: file_lines(path) for path in order if kept.get(path)}
    spans: dict[str, list[list[int]]] = {
        path: [[w.start, w.end] for w in kept[path] if _is_whole(w, lines)]
        for path, lines in texts.items()
        if lines is not None
    }
    for _ in range(MAX_WIDEN_LINES):
        grew = False
        for path, windows in spans.items():
            remaining, moved = _grow_once(texts[path] or [], windows, remaining)
            grew = grew or moved
        if not grew or remaining <= 0:
            break
    out: dict[str, list[Window]] = {}
    for path, planned in kept.items():
        lines = texts.get(path)
        grown: list[Window] = []
        for w in planned:
            span = next((s for s in spans.get(path, []) if s[0] <= w.start and w.end <= s[1]), None)
            if span is None or lines is None:
                grown.append(w)
            else:
                text = "".join(lines[span[0] - 1 : span[1]])
                grown.append(Window(start=span[0], end=span[1], text=text))
        out[path] = _merged(grown)
    return out


def _is_whole(window: Window, lines: list[str] | None) -> bool:
    """Whether ``window`` holds exactly its file's lines (not cut to fit the budget)."""
    if lines is None or not 1 <= window.start <= window.end <= len(lines):
        return False
    return window.text == "".join(lines[window.start - 1 : window.end])


def _grow_once(lines: list[str], windows: list[list[int]], remaining: int) -> tuple[int, bool]:
    """Each of a file's windows one line up and one down, where the line exists, is in no other
    window and fits ``remaining``; returns what remains and whether any window grew."""
    grew = False
    for span in windows:
        for side in (0, 1):
            nxt = span[0] - 1 if side == 0 else span[1] + 1
            if not 1 <= nxt <= len(lines) or any(o[0] <= nxt <= o[1] for o in windows):
                continue
            size = utf8_len(lines[nxt - 1])
            if size > remaining:
                continue
            remaining -= size
            span[side] = nxt
            grew = True
    return remaining, grew


def _merged(windows: list[Window]) -> list[Window]:
    """Windows sorted by start, those that overlap or touch merged into one."""
    result: list[Window] = []
    for w in sorted(windows, key=lambda w: w.start):
        if result and w.start <= result[-1].end + 1:
            result[-1] = _merge(result[-1], w)
        else:
            result.append(w)
    return result
