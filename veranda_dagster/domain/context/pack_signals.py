"""The ticket's non-seed evidence, turned into file scores and anchor lines for the pack.

Five signals join the seed searches, each where its evidence is strongest:

- **traceback frames** name a file, a line and a function with no search at all: the deepest
  frame inside the project weighs most (``FRAME_WEIGHT``), outer frames less;
- **source links** (a forge file view's URL, ``…/blob/<ref>/pkg/mod.py#L42``) name a file and
  usually a line, chosen by the reporter: weighed like frames, in the order they appear;
- **error messages** are searched as fixed strings (one search each): the file holding the
  literal is where the message is raised;
- **full-text BM25** of the whole ticket over the clone's source files (one search): the
  prose names the topic in words no seed carries. Its score is normalised by the best file's,
  so it adds at most ``FULL_TEXT_WEIGHT`` and ranks files no seed reached;
- **modules named in prose** (``prose_modules``): "upstream proxy" for ``_upstream_proxy.py``,
  free from the listing, weighed like a path seed that names one file.

The full-text query and the error messages leave out the report's boilerplate (an issue
template's task list, the reporter's environment block and setup commands:
``report_boilerplate``); the seeds written only there are weighed as noise by the ranking
(``boilerplate_text``).

A search index that cannot provide a signal (a forge's hosted code index before a clone exists:
no file listing to resolve frames against, no texts to index) is named in ``unavailable``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from veranda_dagster.domain.context.code_search import CodeSearch, Hit
from veranda_dagster.domain.context.function_spans import enclosing_function
from veranda_dagster.domain.context.prose_modules import prose_named_modules
from veranda_dagster.domain.context.source_language import dominant_language
from veranda_dagster.domain.intake.report_boilerplate import split_boilerplate
from veranda_dagster.domain.intake.ticket_signals import (
    Frame,
    error_messages,
    resolve_frame_path,
    source_links,
    traceback_frames,
)

FRAME_WEIGHT = 3.0
"""The deepest project frame: stronger than any one seed, since it names where it failed."""
FRAME_DECAY = 0.6
"""Each outer frame weighs this much of the one below it."""
MAX_PROJECT_FRAMES = 6
"""Project frames of a ticket's traceback weighed as signals (and files they name): with
``FRAME_DECAY`` 0.6 a seventh frame would weigh under a twentieth of the innermost, nothing
the ranking feels, and a recursion's thousand frames cost no more than six."""
LINK_WEIGHT = FRAME_WEIGHT
"""The first linked file: a reporter pointing at a line of the tree is as specific as a frame;
each further linked file weighs ``FRAME_DECAY`` of the one before, like outer frames."""
MESSAGE_WEIGHT = 2.0
"""A file holding the printed message's literal, before the rarity discount."""
FULL_TEXT_WEIGHT = 1.5
"""The best full-text file's share; others in proportion to their BM25 score."""
FULL_TEXT_DEPTH = 40
"""Files taken from the full-text ranking: below this BM25 only restates the seed ranking."""

SIGNAL_FRAMES = "traceback_frames"
SIGNAL_LINKS = "source_links"
SIGNAL_FULL_TEXT = "full_text_bm25"


@dataclass
class FrameAnchor:
    path: str
    line: int
    weight: float


@dataclass
class TicketEvidence:
    frames: list[FrameAnchor] = field(default_factory=list)
    links: list[FrameAnchor] = field(default_factory=list)
    """Linked source lines; a file linked twice has two anchors and counts once."""
    messages: list[tuple[str, list[Hit]]] = field(default_factory=list)
    full_text: dict[str, float] = field(default_factory=dict)
    """Path -> normalised BM25 score in (0, 1]."""
    term_weights: dict[str, float] = field(default_factory=dict)
    """The ticket's terms found in the tree, with their idf (empty without the ranking)."""
    searches: int = 0
    unavailable: list[str] = field(default_factory=list)
    main_language: str | None = None
    """The language most of the tree's source files are in (``None`` without a listing)."""
    report_text: str = ""
    """The ticket's text without its boilerplate lines, lower-cased: what the report says."""
    boilerplate_text: str = ""
    """The ticket's boilerplate lines (task list, environment block), lower-cased."""
    named_modules: list[str] = field(default_factory=list)
    """Files whose stem is two consecutive prose words joined (``prose_modules``)."""


def _def_lines(lines: list[str], function: str) -> list[int]:
    """Every line (1-based) that defines ``function`` with ``def``, at any depth. IPython 8
    prints the qualified name (``DataFrame.__getitem__``); its ``def`` has the last part."""
    name = function.rsplit(".", 1)[-1]
    pattern = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\b")
    return [n for n, text in enumerate(lines, 1) if pattern.match(text)]


def _definition_line(lines: list[str], function: str, near: int) -> int | None:
    """The line defining ``function`` closest to ``near`` (the reporter's version may differ
    from the base by a few lines, or many)."""
    found = _def_lines(lines, function)
    return min(found, key=lambda n: abs(n - near)) if found else None


def _printed_line(lines: list[str], frame: Frame) -> int | None:
    """The line holding the statement the frame printed (``Frame.code``), the one nearest the
    printed line number, inside the frame's function when the file defines it. Why: the
    reporter's version and the base differ, so the printed number can point at another
    statement, or another function of the same name (a second ``def get`` in another class);
    the printed statement is what actually ran. ``None`` when nothing matches."""
    if frame.code is None:
        return None
    at = [n for n, text in enumerate(lines, 1) if text.strip() == frame.code]
    if frame.function and at:
        spans = _function_spans(lines, frame.function)
        inside = [n for n in at if any(start <= n <= end for start, end in spans)]
        at = inside or ([] if spans else at)
    return min(at, key=lambda n: abs(n - frame.line)) if at else None


def _function_spans(lines: list[str], function: str) -> list[tuple[int, int]]:
    """The spans of every ``def function`` in the file."""
    spans = (enclosing_function(lines, n) for n in _def_lines(lines, function))
    return [span for span in spans if span is not None]


FileText = Callable[[str], list[str] | None]


def _listing(search: CodeSearch) -> tuple[list[str], FileText] | None:
    """The tree's file listing and text reader, ``None`` when the search index has no clone to list
    (a remote index), so frame and link paths cannot be resolved."""
    paths = getattr(search, "paths", None)
    file_text = getattr(search, "file_text", None)
    if not (callable(paths) and callable(file_text)):
        return None
    repo_paths = paths()
    return None if repo_paths is None else (repo_paths, file_text)


def _anchored(
    found: list[Frame],
    search: CodeSearch,
    anchor: Callable[[list[Frame], list[str], FileText], list[FrameAnchor]],
) -> list[FrameAnchor] | None:
    """``anchor`` over the tree's listing for what the ticket names (``found``): ``[]`` when it
    names nothing, ``None`` when the search index lists no files to resolve the paths against."""
    if not found:
        return []
    listing = _listing(search)
    return None if listing is None else anchor(found, *listing)


def frame_anchors(text: str, search: CodeSearch) -> list[FrameAnchor] | None:
    """Project frames, deepest first, as file anchors; ``None`` when the search index lists no
    files to resolve frame paths against."""
    return _anchored(traceback_frames(text), search, _frame_anchors)


def _frame_anchors(
    frames: list[Frame], repo_paths: list[str], file_text: FileText
) -> list[FrameAnchor]:
    anchors: list[FrameAnchor] = []
    weight = FRAME_WEIGHT
    for frame in frames:
        path = resolve_frame_path(frame.path, repo_paths)
        if path is None:
            continue
        lines = file_text(path) or []
        line = min(max(1, frame.line), max(1, len(lines)))
        if (printed := _printed_line(lines, frame)) is not None:
            line = printed  # the statement the frame printed, wherever the base moved it
        elif frame.function and (found := _definition_line(lines, frame.function, frame.line)):
            span = enclosing_function(lines, found)
            if span is None or not span[0] <= frame.line <= span[1]:
                line = found  # the base moved: the function, not the printed line number
        anchors.append(FrameAnchor(path, line, weight))
        weight *= FRAME_DECAY
        if len(anchors) >= MAX_PROJECT_FRAMES:
            break
    return anchors


def link_anchors(text: str, search: CodeSearch) -> list[FrameAnchor] | None:
    """Linked source lines, in the order the ticket has them, as file anchors: the first linked
    file weighs ``LINK_WEIGHT``, each further file ``FRAME_DECAY`` of the one before, and every
    line linked in a file is one of its anchors at that file's weight (line 0 when the link
    names no line: the file only). ``None`` when the search index lists no files."""
    return _anchored(source_links(text), search, _link_anchors)


def _link_anchors(
    links: list[Frame], repo_paths: list[str], file_text: FileText
) -> list[FrameAnchor]:
    weights: dict[str, float] = {}
    anchors: list[FrameAnchor] = []
    for link in links:
        path = resolve_frame_path(link.path, repo_paths)
        if path is None or (path not in weights and len(weights) >= MAX_PROJECT_FRAMES):
            continue
        weights.setdefault(path, LINK_WEIGHT * FRAME_DECAY ** len(weights))
        lines = len(file_text(path) or [])
        line = min(link.line, max(1, lines))
        anchors.append(FrameAnchor(path, line, weights[path]))
    return anchors


def gather(text: str, search: CodeSearch, max_searches: int) -> TicketEvidence:
    """Frames (free), then the full-text ranking and the error messages, each one search, all
    within ``max_searches``; the last two read the report without its boilerplate."""
    evidence = TicketEvidence()
    report, boilerplate = split_boilerplate(text)
    evidence.report_text, evidence.boilerplate_text = report.lower(), boilerplate.lower()
    paths = getattr(search, "paths", None)
    listing = paths() if callable(paths) else None
    evidence.main_language = dominant_language(listing) if listing else None
    evidence.named_modules = prose_named_modules(report, listing) if listing else []
    frames = frame_anchors(text, search)
    if frames is None:
        evidence.unavailable.append(SIGNAL_FRAMES)
    else:
        evidence.frames = frames
    links = link_anchors(text, search)
    if links is None:
        evidence.unavailable.append(SIGNAL_LINKS)
    else:
        evidence.links = links
    rank = getattr(search, "full_text_rank", None)
    ranked = rank(report) if callable(rank) and max_searches > 0 else None
    if ranked is None:
        evidence.unavailable.append(SIGNAL_FULL_TEXT)
    else:
        evidence.searches += 1
        top = ranked[0][1] if ranked else 0.0
        evidence.full_text = {p: s / top for p, s in ranked[:FULL_TEXT_DEPTH] if top > 0}
        weights = getattr(search, "term_weights", None)
        evidence.term_weights = weights() if callable(weights) else {}
    for message in error_messages(report):
        if evidence.searches >= max_searches:
            break
        evidence.messages.append((message, search.search(message)))
        evidence.searches += 1
    return evidence
