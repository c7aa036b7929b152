"""The pack's choice of files after the ranking: files the best-ranked file imports or calls
move up, and when the ticket gave no strong evidence the full-text ranking keeps a share.

Why a module of its own: the ranking (``retrieval.rank_files``) sums the ticket's evidence; these
rules judge the ranking as a whole (the tree's structure around the best guess,
``import_graph.py``; how strong the evidence behind the first files is), after the ranking and
before the byte budget is spent.
"""

from __future__ import annotations

import re

from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.context.function_spans import enclosing_function
from veranda_dagster.domain.context.import_graph import (
    PathIndex,
    defines,
    imported_paths,
    package_calls,
)
from veranda_dagster.domain.context.pack_windows import FileEvidence
from veranda_dagster.domain.core.bounds import MAX_PACK_FILES

IMPORT_PROMOTION = 1.6
"""A file the best-ranked file imports has its score multiplied by this (``promote_imported``)."""
FULL_TEXT_SHARE_WHEN_WEAK = MAX_PACK_FILES // 2
"""Files of the full-text ranking kept when no chosen file has strong evidence: with only
keyword hits neither ranking is the better judge, so each holds half the pack."""
ALIAS_CALL_PROMOTION = IMPORT_PROMOTION
"""A file defining what the best file calls through a package alias (``nx.f(``) is promoted
like one it imports: the package only re-exports, the call goes to that file."""
CALLEE_ANCHOR_VALUE = 0.5
"""The callee's definition line as an anchor of its file: its whole function is packed."""
MAX_CALLEE_FILES = 2
"""Files the named function's callees bring in that no other evidence reached (``callee_files``):
each takes the place of the weakest of the six, so only a couple."""
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")
_TOP_DEF_AT = re.compile(r"^(?:async\s+)?def\s+(\w+)")
"""A top-level function: a class the named function calls is most often an exception it
raises, whose file holds no logic to fix."""


def named_function_calls(ev: FileEvidence, lines: list[str]) -> set[str]:
    """Names called (``f(``) in the body of the function around the file's best strong line:
    the function the ticket named (a definition hit, a frame), whose callees hold the fix as
    often as it does. Empty when no strong line sits in a function."""
    strong = sorted(ev.strong, key=lambda n: (-ev.lines.get(n, 0.0), n))
    span = enclosing_function(lines, strong[0]) if strong else None
    if span is None:
        return set()
    names: set[str] = set()
    for text in lines[span[0] : span[1]]:  # the body, not the def line itself
        if not text.lstrip().startswith("#"):
            names.update(_CALLED.findall(text))
    return names


def callee_files(
    best: FileEvidence, lines: list[str], imported: list[str], search: CodeSearch
) -> list[tuple[str, int]]:
    """``(path, definition line)`` of the files the best file imports that define (a top-level
    ``def``) a function its named function calls, in import order, at most ``MAX_CALLEE_FILES``: one
    step along the call graph from the function a ticket names, the way imports are
    followed."""
    file_text = getattr(search, "file_text", None)
    called = named_function_calls(best, lines)
    if not called or not callable(file_text):
        return []
    found: list[tuple[str, int]] = []
    for path in imported:
        if path.endswith("/__init__.py"):
            continue
        for number, text in enumerate(file_text(path) or [], 1):
            m = _TOP_DEF_AT.match(text)
            if m and m.group(1) in called:
                found.append((path, number))
                break
        if len(found) >= MAX_CALLEE_FILES:
            break
    return found


def promote_imported(
    ranked: list[FileEvidence], search: CodeSearch, max_files: int = MAX_PACK_FILES
) -> list[FileEvidence]:
    """``ranked`` with every file the best-ranked file imports (``import_graph.py``) scored
    ``IMPORT_PROMOTION`` times higher, and every file defining a function it calls through a
    package alias (``nx.f(``) ``ALIAS_CALL_PROMOTION`` times higher, the best file kept first.

    Why: the second file of a two-file fix is most often a module the first one imports or
    calls, and the ticket's words rarely name it. Only files the ticket already gave evidence
    for move (the imports of a long module are many), never a package ``__init__`` (it
    re-exports, the fix goes to the module behind it), and only the first file's imports: the
    imports of the second guess promote noise as often as a fix. A package ``__init__`` ranked
    first promotes none of its imports (it imports every module it re-exports). Costs no
    search; needs the search index's file listing and texts (a clone), and does nothing without
    them. A file is only read for definitions when the promotion could lift it into the
    ``max_files``."""
    paths = getattr(search, "paths", None)
    file_text = getattr(search, "file_text", None)
    if not ranked or not (callable(paths) and callable(file_text)):
        return ranked
    tree = paths()
    lines = file_text(ranked[0].path) if tree else None
    if not lines:
        return ranked
    index = PathIndex(tree)
    # a package's __init__ imports its every module to re-export them: no sign of the fix
    package_init = ranked[0].path.endswith("/__init__.py")
    imports = [] if package_init else imported_paths(ranked[0].path, lines, index)
    imported = set(imports)
    called = package_calls(ranked[0].path, lines, index)
    last = ranked[min(len(ranked), max(1, max_files)) - 1].score
    by_path = {ev.path: ev for ev in ranked}
    for path, line in callee_files(ranked[0], lines, imports, search):
        ev = by_path.get(path)
        if ev is None:
            ev = by_path[path] = FileEvidence(path)
            ranked.append(ev)
        ev.score = max(ev.score, last / IMPORT_PROMOTION)  # lands among the six once promoted
        ev.lines[line] = max(ev.lines.get(line, 0.0), CALLEE_ANCHOR_VALUE)
        ev.strong.add(line)
    for ev in ranked[1:]:
        if ev.path.endswith("/__init__.py"):
            continue
        if ev.path in imported:
            ev.score *= IMPORT_PROMOTION
        elif called and ev.score * ALIAS_CALL_PROMOTION >= last:
            text = file_text(ev.path)
            if text and defines(text, called):
                ev.score *= ALIAS_CALL_PROMOTION
    return ranked[:1] + sorted(ranked[1:], key=lambda e: (-e.score, e.path))


def named_callee_first(
    ranked: list[FileEvidence],
    search: CodeSearch,
    seed_names: set[str],
    max_files: int = MAX_PACK_FILES,
) -> list[FileEvidence]:
    """``ranked`` with a file moved first when the best file's named function (the one around
    its strongest line, ``named_function_calls``) calls a name the ticket also names, and that
    file, among the first ``max_files``, defines it (a definition hit of that seed).

    Why: a ticket naming both a function and a helper it calls describes the failure from the
    outside in, like a traceback; the fix goes to the callee as the deepest frame is where a
    traceback's fix goes, while the caller's file collects more of the ticket's words. Names
    compared case-sensitively; a caller's own file keeps its place when it also defines the
    callee. An exception class it raises (``_RAISED``) is not a callee that holds a fix."""
    file_text = getattr(search, "file_text", None)
    if len(ranked) < 2 or not seed_names or not callable(file_text):
        return ranked
    lines = file_text(ranked[0].path) or []
    named = named_function_calls(ranked[0], lines) & seed_names
    called = {name for name in named if not _RAISED.search(name)}
    if not called or defines_any(lines, called):
        return ranked
    for index, ev in enumerate(ranked[1:max_files], 1):
        text = file_text(ev.path) or []
        if any(_defined_at(text, line, called) for line in ev.strong):
            return _moved_first(ranked, index)
    return ranked


def _moved_first(ranked: list[FileEvidence], index: int) -> list[FileEvidence]:
    """``ranked`` with the file at ``index`` first and the others in their order."""
    return [ranked[index], *ranked[:index], *ranked[index + 1 :]]


def definer_over_reexport(
    ranked: list[FileEvidence],
    search: CodeSearch,
    seed_names: set[str],
    max_files: int = MAX_PACK_FILES,
) -> list[FileEvidence]:
    """``ranked`` with a file moved first when the best file is a package ``__init__`` that
    defines none of the names the ticket gives, and a file among the first ``max_files``
    defines one of them (``def``/``class``, any depth): the first such file in ranked order.

    Why: a package ``__init__`` ranks first on a dotted module seed (``pkg.sub`` names
    ``pkg/sub/__init__.py``) or on the names it re-exports, while the fix goes to the module
    that defines what the ticket names. An ``__init__`` that defines a named name keeps its
    place: there the code is in the ``__init__`` itself."""
    file_text = getattr(search, "file_text", None)
    if len(ranked) < 2 or not seed_names or not callable(file_text):
        return ranked
    if not ranked[0].path.endswith("/__init__.py"):
        return ranked
    if defines_any(file_text(ranked[0].path) or [], seed_names):
        return ranked
    for index, ev in enumerate(ranked[1:max_files], 1):
        if defines_any(file_text(ev.path) or [], seed_names):
            return _moved_first(ranked, index)
    return ranked


def definer_over_importer(
    ranked: list[FileEvidence],
    search: CodeSearch,
    strongest: str | None,
    seed_names: set[str],
    max_files: int = MAX_PACK_FILES,
) -> list[FileEvidence]:
    """``ranked`` with a file moved first when the best file defines none of the names the
    ticket gives and imports (``import_graph.py``) a file among the first ``max_files`` that
    defines the ticket's strongest name (its best-ranked seed, ``def``/``class``, any depth).

    Why: a hub module (``web.py`` re-exporting ``web.Response``) or a caller collects the
    ticket's words and its dotted path hit, while the fix goes to the module it imports that
    defines what the ticket names first. Only the strongest name: a weaker name the hub imports
    is as often a helper the fix never touches (measured on the development sets). A best file
    defining any named name keeps its place, and a package ``__init__`` is never the definer
    moved first (``definer_over_reexport`` judges an ``__init__`` ranked first)."""
    paths = getattr(search, "paths", None)
    file_text = getattr(search, "file_text", None)
    if len(ranked) < 2 or strongest is None or not (callable(paths) and callable(file_text)):
        return ranked
    lines = file_text(ranked[0].path) or []
    if ranked[0].path.endswith("/__init__.py") or defines_any(lines, seed_names | {strongest}):
        return ranked
    imported = set(imported_paths(ranked[0].path, lines, PathIndex(paths())))
    for index, ev in enumerate(ranked[1:max_files], 1):
        if ev.path not in imported or ev.path.endswith("/__init__.py"):
            continue
        if defines_any(file_text(ev.path) or [], {strongest}):
            return _moved_first(ranked, index)
    return ranked


_RAISED = re.compile(r"(?:Error|Exception|Warning)$")
"""An exception class the named function raises: its file holds no logic to fix."""
_DEF_NAME = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)")


def _defined_at(lines: list[str], line: int, names: set[str]) -> bool:
    m = _DEF_NAME.match(lines[line - 1]) if 0 < line <= len(lines) else None
    return m is not None and m.group(1) in names


def defines_any(lines: list[str], names: set[str]) -> bool:
    """Whether ``lines`` define (``def``/``class``, any depth) one of ``names``."""
    return any((m := _DEF_NAME.match(text)) and m.group(1) in names for text in lines)


def keep_full_text_share(
    ranked: list[FileEvidence], full_text: dict[str, float], max_files: int = MAX_PACK_FILES
) -> list[FileEvidence]:
    """The first ``max_files`` of ``ranked``, except that when none of them has strong evidence
    (a defined name, a frame, a linked line, an error message, a path hit) the full-text
    ranking's best ``FULL_TEXT_SHARE_WHEN_WEAK`` files are among them, in ranked order.

    Why: the pack adds the full-text score to keyword hits, and a ticket that names no code
    gives many files a few keyword hits each; their sum can push the files the whole ticket
    reads like (BM25 over the full text, SWE-bench's ranker) out of the six. Strong evidence
    is trusted as before."""
    top = ranked[:max_files]
    if not full_text or any(ev.strong or ev.head > 0 for ev in top):
        return top
    best = sorted(full_text, key=lambda p: (-full_text[p], p))[:FULL_TEXT_SHARE_WHEN_WEAK]
    kept = {ev.path for ev in ranked if ev.path in best}
    others = max(0, max_files - len(kept))
    chosen: list[FileEvidence] = []
    for ev in ranked:
        if ev.path in kept:
            chosen.append(ev)
        elif others > 0:
            chosen.append(ev)
            others -= 1
    return chosen[:max_files]
