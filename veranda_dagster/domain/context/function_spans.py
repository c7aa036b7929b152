"""The function around a line, found by indentation, so a window can hold a whole body.

Why indentation and not a parser: the pack reads hostile trees in many languages and must never
fail on one file, and a definition keyword followed by a block indented deeper (closed by a line
back at the definition's indentation: ``}``, ``end``, or the next statement) describes Python,
and formatted Go, Rust, JS/TS, Java, Ruby and shell alike. Bounded: at most ``MAX_SCAN_LINES``
are walked either way.
"""

from __future__ import annotations

import re

MAX_SCAN_LINES = 2_000
"""Lines walked up to a definition or down to its end; longer bodies get a plain window."""

_DEF_LINE = re.compile(
    r"^([ \t]*)(?:export\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:static\s+)?"
    r"(?:def|func|fn|function|sub)\s+[\w(]"
)
_CLASS_LINE = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:(?:public|abstract|final|sealed)\s+)*class\s+[A-Za-z_]"
)
_DECORATOR = re.compile(r"^[ \t]*@")
_CLOSER = re.compile(r"^[ \t]*(?:[}\])]|end\b)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _blank(line: str) -> bool:
    return not line.strip()


def _block_end(lines: list[str], start: int) -> int:
    """0-based index of the last line of the block opened at ``start``."""
    depth = _indent(lines[start])
    last = start
    k = start + 1
    while k < len(lines) and k - start <= MAX_SCAN_LINES:
        line = lines[k]
        if not _blank(line):
            if _indent(line) <= depth:
                if _paren_open(lines, start, k):
                    last = k  # a wrapped signature's ``) -> T:`` at the def's indentation
                    k += 1
                    continue
                if _CLOSER.match(line) and _indent(line) == depth:
                    last = k
                break
            last = k
        k += 1
    return last


def _paren_open(lines: list[str], start: int, stop: int) -> bool:
    """Whether the definition's signature is still open (more ``(`` than ``)``) before
    ``stop``: a wrapped signature's closing ``) -> T:`` sits at the definition's indentation."""
    text = "".join(lines[start:stop])
    return text.count("(") > text.count(")")


def enclosing_function(lines: list[str], line: int) -> tuple[int, int] | None:
    """1-based ``(start, end)`` of the innermost function whose body holds ``line`` (decorators
    included), or of the function defined on ``line`` itself; ``None`` at module level."""
    if not 1 <= line <= len(lines):
        return None
    index = line - 1
    probe = index
    while probe > 0 and _blank(lines[probe]):
        probe -= 1
    limit = _indent(lines[probe]) if not _DEF_LINE.match(lines[index]) else None
    for j in range(index, max(-1, index - MAX_SCAN_LINES), -1):
        text = lines[j]
        if _blank(text):
            continue
        if limit is not None and _indent(text) >= limit:
            continue
        if _DEF_LINE.match(text):
            end = _block_end(lines, j)
            if end >= index:
                start = j
                while start > 0 and _DECORATOR.match(lines[start - 1]):
                    start -= 1
                return start + 1, end + 1
        if _CLOSER.match(text) and not _DEF_LINE.match(text):
            continue  # a wrapped signature's ``)`` or a closed block: not a statement level
        limit = _indent(text) if limit is None else min(limit, _indent(text))
        if limit == 0:
            return None
    return None


def class_span(lines: list[str], line: int) -> tuple[int, int] | None:
    """1-based ``(start, end)`` of the class defined on ``line`` (decorators included), by the
    same indentation rule as a function; ``None`` when ``line`` defines no class."""
    if not 1 <= line <= len(lines) or not _CLASS_LINE.match(lines[line - 1]):
        return None
    start = line - 1
    while start > 0 and _DECORATOR.match(lines[start - 1]):
        start -= 1
    return start + 1, _block_end(lines, line - 1) + 1
