"""Evidence a bug report carries beyond identifiers: traceback frames, links to source lines and
error messages.

A traceback names the file, the line and the function where the program was when it failed, so
it is the strongest pointer a ticket can hold; the deepest frame inside the project is usually
next to the bug, so frames are returned deepest first. An error message is text the program
printed, so the literal that produced it is in the source: searched as a fixed string it finds
the ``raise`` that the fix often changes. Messages are reduced to their longest static part,
because the printed text carries values (``'abc'``, ``42``, ``<object at 0x7f…>``) the source
has as ``{value!r}``. A link to a file of the tree at some revision
(``…/blob/<ref>/pkg/mod.py#L42``, ``…/-/blob/…``, ``…/src/<ref>/…#lines-42``: the forms forges'
file views share) is the reporter pointing at a line by hand, as specific as a frame.

Both are regex over hostile text, bounded by ``MAX_EXTRACT_TEXT_CHARS`` and by the caps here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from veranda_dagster.domain.core.bounds import MAX_EXTRACT_TEXT_CHARS

MAX_FRAMES = 40
"""Frames read from one ticket: a recursion error's thousand frames repeat the same few."""
MAX_LINKS = 8
"""Source links read from one ticket: past a few, the report quotes a code review, not a bug."""
MAX_MESSAGES = 2
"""Error-message searches per pack: each is one of the twelve searches."""
MIN_MESSAGE_CHARS = 12
"""A shorter static fragment (``not found``) matches everywhere and ranks nothing."""
MAX_MESSAGE_CHARS = 120
"""Of one error-message search: a message's static part is a sentence; past this the text is a
whole log line with values in it, which matches nothing verbatim."""

_PY_FRAME = re.compile(
    r"""File\s+["']([^"'\n]{1,300})["'],\s+line\s+(\d{1,7})"""
    r"""(?:,\s+in\s+([\w<>.]{1,120})(?![\w-]|[ \t]+template\b))?"""
)
"""CPython's ``File "pkg/mod.py", line 12, in func`` (also what ``logging``'s ``exc_info``,
Sphinx's and Jinja's tracebacks print; Jinja's ``in top-level template code`` names no
function)."""
_IPYTHON_FRAME = re.compile(
    r"(?m)File\s+(~?[^\s:\"'<>]{1,300}\.pyx?):(\d{1,7})(?:,\s+in\s+([\w.]{1,120}))?"
)
"""IPython 8's ``File ~/…/pkg/mod.py:41, in func(x, y)`` (and ``File /abs/pkg/mod.py:41``)."""
_IPYTHON7_FRAME = re.compile(
    r"(?m)^[ \t]{0,8}(~?/?[\w.~/\\-]{1,300}\.py)[ \t]+in[ \t]+(\w{1,120})\([^\n]{0,300}\n"
    r"(?:[^\n]{0,300}\n){0,12}?-+>[ \t]*(\d{1,7})\b"
)
"""IPython 7's ``~/…/pkg/mod.py in func(x)`` header, its line from the ``---> 41`` arrow below
(within a dozen lines: the context IPython prints)."""
_PYTEST_FRAME = re.compile(r"(?m)^\s{0,8}([\w./\\-]{1,300}\.py):(\d{1,7}):\s(?:in\s+(\w{1,120}))?")
"""pytest's short form ``pkg/mod.py:12: in func`` (or ``: ValueError``)."""
_SITE_PREFIX = re.compile(r"^.*?[/\\](?:site-packages|dist-packages)[/\\]")
_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]{1,2000}")
_FILE_NAME = re.compile(r"\.\w{1,10}$")
_LINE_FRAGMENT = re.compile(r"^(?:L|lines-)(\d{1,7})")
_FILE_VIEW_MARKERS = ("blob", "src")
"""The path segment after which a file view's URL has ``<ref>/<path in the tree>``."""
_EXCEPTION_LINE = re.compile(
    r"(?m)^\s{0,8}(?:E\s+)?(?:[a-z_][\w]{0,40}\.){0,6}"
    r"((?:[A-Z]\w{0,60})?(?:Error|Exception|Warning|Exit|Interrupt|Failure|Fault)"
    r"|(?<=\.)[A-Z][a-z]\w{0,60})"
    r":[ \t]+([^\n]{1,400})$"
)
"""``ValueError: …``, ``E   KeyError: …`` (pytest), or a project's own exception named with its
module (``click.exceptions.BadParameter: …``)."""
_QUOTED = re.compile(r"""(?<![\w`])(["'“])([^"'“”`\n]{12,200})(?:["'”])(?![\w`])""")
_DYNAMIC = re.compile(
    r"""'[^'\n]*'|"[^"\n]*"|<[^>\n]*>|\b0x[0-9a-fA-F]+\b|\b\d[\d.,:_-]*\b|\S*[/\\]\S*"""
)
"""What a printed message has that its source literal does not: quoted values, reprs,
addresses, numbers and paths."""


@dataclass(frozen=True)
class Frame:
    path: str
    """As the ticket printed it, site-packages prefix removed."""
    line: int
    function: str | None
    code: str | None = None
    """The statement CPython prints under the frame (``result = foo(bar)``), stripped; ``None``
    when the form prints none or it is too short to find one line by (``MIN_FRAME_CODE_CHARS``)."""


MIN_FRAME_CODE_CHARS = 8
"""A printed statement shorter than this (``pass``, ``raise``, ``return x``) is on too many
lines of a file to say which one the frame meant."""
MAX_FRAME_CODE_CHARS = 300
"""Past this a line is not a statement CPython printed (it prints one source line)."""
_MARKERS = re.compile(r"^[\s^~]*$")
"""CPython 3.11's ``^^^^~~~~`` line under the statement (no statement of its own)."""


def _statement(code: str) -> str | None:
    """``code`` as a printed statement, or ``None`` when it cannot say which line it is: too
    short (``raise``), too long for one source line, a frame header, or only markers."""
    code = code.strip()
    if (
        len(code) < MIN_FRAME_CODE_CHARS
        or len(code) > MAX_FRAME_CODE_CHARS
        or code.startswith(("File ", "Traceback"))
        or _MARKERS.match(code)
    ):
        return None
    return code


def _printed_code(text: str, end: int) -> str | None:
    """The line after a frame line ending at ``end`` (CPython's, pytest's ``--tb=short``), when
    it is the printed statement: indented, not another frame, not only markers, not the
    exception line."""
    rest_of_line, _, after = text[end : end + 2 * MAX_FRAME_CODE_CHARS].partition("\n")
    if rest_of_line.strip():
        return None
    line = after.split("\n", 1)[0]
    return _statement(line) if line[:1].isspace() else None


MAX_PYTEST_LOOKBACK_LINES = 40
"""Lines above pytest's long-form location line searched for its ``>`` statement: the ``E``
lines of one exception sit between them; the function's whole source above is not needed."""
_PYTEST_FAILING_LINE = re.compile(r"^>\s([^\n]*)$")
"""pytest's long form marks the line that ran with ``>`` at the start of the line."""
_PYTEST_SECTION_END = re.compile(r"^(?:_ _ |[_=]{5,}|\S[^\n]*\.py:\d+:)")
"""A separator between frames, or the previous frame's location line: the lookback stops."""


def _pytest_failing_code(text: str, start: int) -> str | None:
    """pytest's long form (``--tb=long``/``auto``) prints a frame's source with the line that ran
    marked ``>`` and its location (``pkg/mod.py:12: ValueError``) below: the nearest marked
    line above ``start`` within ``MAX_PYTEST_LOOKBACK_LINES``, not past another frame."""
    above = text[max(0, start - MAX_PYTEST_LOOKBACK_LINES * MAX_FRAME_CODE_CHARS) : start]
    for line in reversed(above.split("\n")[-MAX_PYTEST_LOOKBACK_LINES - 1 : -1]):
        if (marked := _PYTEST_FAILING_LINE.match(line)) is not None:
            return _statement(marked.group(1))
        if _PYTEST_SECTION_END.match(line):
            return None
    return None


def _rest_of_arrow_line(text: str, end: int) -> str | None:
    """IPython 7's statement: what follows the ``---> 41`` ending at ``end`` on its line."""
    rest = text[end : end + MAX_FRAME_CODE_CHARS + 2].split("\n", 1)[0]
    return _statement(rest) if rest[:1].isspace() else None


MAX_IPYTHON_CONTEXT_LINES = 12
"""Lines below an IPython frame header searched for its arrow line (IPython prints a few lines
of context on either side)."""
_IPYTHON_ARROW = re.compile(r"^\s{0,8}-*>\s*(\d{1,7})\s([^\n]*)$")
"""IPython's ``-> 41 code`` (8) or ``---> 41     code`` (7): the line that ran, numbered."""


def _arrow_code(text: str, end: int, line: str) -> str | None:
    """The statement on the arrow line numbered ``line`` within ``MAX_IPYTHON_CONTEXT_LINES``
    after ``end``, before a blank line (the end of the frame's context)."""
    below = text[end : end + (MAX_IPYTHON_CONTEXT_LINES + 1) * MAX_FRAME_CODE_CHARS]
    for row in below.split("\n")[1 : MAX_IPYTHON_CONTEXT_LINES + 1]:
        if not row.strip():
            return None
        arrow = _IPYTHON_ARROW.match(row)
        if arrow is not None and arrow.group(1) == line:
            return _statement(arrow.group(2))
    return None


def _frame(raw_path: str, line: str, function: str | None, code: str | None = None) -> Frame:
    """A frame as printed, its path without the install prefix (``site-packages/``, ``~/``)."""
    path = _SITE_PREFIX.sub("", re.sub(r"[/\\]+", "/", raw_path))
    func = function if function and not function.startswith("<") else None
    return Frame(path.lstrip("~").lstrip("./"), int(line), func, code)


def traceback_frames(text: str) -> list[Frame]:
    """Every traceback frame in ``text``, deepest first (the last printed is the deepest), each
    ``(path, line)`` once; at most ``MAX_FRAMES``."""
    text = text[:MAX_EXTRACT_TEXT_CHARS]
    found: list[tuple[int, Frame]] = []
    for m in _PY_FRAME.finditer(text):
        code = _printed_code(text, m.end())
        found.append((m.start(), _frame(m.group(1), m.group(2), m.group(3), code)))
    for m in _PYTEST_FRAME.finditer(text):
        code = (  # --tb=short's statement below ``path:12: in func``; the long form's above
            _printed_code(text, m.end()) if m.group(3) else _pytest_failing_code(text, m.start())
        )
        found.append((m.start(), _frame(m.group(1), m.group(2), m.group(3), code)))
    for m in _IPYTHON_FRAME.finditer(text):
        code = _arrow_code(text, m.end(), m.group(2))
        found.append((m.start(), _frame(m.group(1), m.group(2), m.group(3), code)))
    for m in _IPYTHON7_FRAME.finditer(text):
        code = _rest_of_arrow_line(text, m.end())
        found.append((m.start(), _frame(m.group(1), m.group(3), m.group(2), code)))
    frames: list[Frame] = []
    seen: set[tuple[str, int]] = set()
    for _, frame in sorted(found, key=lambda item: -item[0]):
        if (frame.path, frame.line) in seen:
            continue
        seen.add((frame.path, frame.line))
        frames.append(frame)
        if len(frames) >= MAX_FRAMES:
            break
    return frames


def source_links(text: str) -> list[Frame]:
    """Every link to a file view in ``text`` as a frame: the path inside the tree and the linked
    line (0 when the link names no line), in order of appearance, each ``(path, line)`` once; at
    most ``MAX_LINKS``. Split with string operations: hostile text costs time in proportion to
    its length."""
    links: list[Frame] = []
    seen: set[tuple[str, int]] = set()
    for m in _URL.finditer(text[:MAX_EXTRACT_TEXT_CHARS]):
        address, _, fragment = m.group(0).partition("#")
        parts = address.split("?", 1)[0].split("/")[3:]  # after the scheme and the host
        marker = next((i for i, part in enumerate(parts) if part in _FILE_VIEW_MARKERS), None)
        if marker is None:
            continue
        path = "/".join(p for p in parts[marker + 2 :] if p)
        if not _FILE_NAME.search(path):
            continue
        line = _LINE_FRAGMENT.match(fragment)
        link = Frame(path, int(line.group(1)) if line else 0, None)
        if (link.path, link.line) not in seen:
            seen.add((link.path, link.line))
            links.append(link)
        if len(links) >= MAX_LINKS:
            break
    return links


def resolve_frame_path(frame_path: str, repo_paths: list[str]) -> str | None:
    """The repository file a frame's path names: the one sharing the longest tail of path
    components with it, at least two (``pkg/mod.py``) unless the frame's path is a bare file
    name that exists at the top of the tree; ``None`` for frames outside the project."""
    parts = [p for p in frame_path.split("/") if p]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0] if parts[0] in set(repo_paths) else None
    best: tuple[int, str] | None = None
    for path in repo_paths:
        if not path.endswith(parts[-1]):
            continue
        theirs = path.split("/")
        shared = 0
        while shared < min(len(parts), len(theirs)) and parts[-1 - shared] == theirs[-1 - shared]:
            shared += 1
        if shared >= 2 and (
            best is None or shared > best[0] or (shared == best[0] and path < best[1])
        ):
            best = (shared, path)
    return best[1] if best else None


def static_fragment(message: str) -> str | None:
    """The longest run of a printed message with no value in it, trimmed; ``None`` if none is
    at least ``MIN_MESSAGE_CHARS`` long with two words."""
    pieces = _DYNAMIC.split(message)
    best = ""
    for piece in pieces:
        piece = piece.strip(" \t.,:;!?()[]{}=-")
        if len(piece) > len(best):
            best = piece
    best = best[:MAX_MESSAGE_CHARS].strip()
    if len(best) < MIN_MESSAGE_CHARS or " " not in best:
        return None
    return best


def error_messages(text: str, limit: int = MAX_MESSAGES) -> list[str]:
    """Fixed strings to search for: the static part of each exception line's message (last
    exception first: it is the one raised), then quoted prose sentences; at most ``limit``."""
    text = text[:MAX_EXTRACT_TEXT_CHARS]
    out: list[str] = []
    candidates = [m.group(2) for m in _EXCEPTION_LINE.finditer(text)][::-1]
    candidates += [m.group(2) for m in _QUOTED.finditer(text) if " " in m.group(2)]
    for raw in candidates:
        fragment = static_fragment(raw)
        if fragment and fragment.lower() not in {o.lower() for o in out}:
            out.append(fragment)
        if len(out) >= limit:
            break
    return out
