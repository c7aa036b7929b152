"""The lines of a bug report that a template or the reporter's setup wrote, not the bug.

Issue templates ask for two things every report then carries whatever the bug is:

- a **task list** (``- [x] I have searched the issues…``, ``* [ ] This is a bug report``): the
  reporter ticks boxes; the names in them (a search site, a web framework, the project's own
  name) say nothing about where the fix goes;
- an **environment block**: consecutive ``Name: value`` lines giving versions and the platform
  (``Python: 3.12.3``, ``OpenSSL: OpenSSL 3.5.4``, ``Platform: Linux-6.17-x86_64``, a library's
  ``version_info()`` print-out). A platform tag such as ``x86_64`` then matches the project's
  release scripts, and the version words outweigh the prose in the full-text ranking.

A block counts only when at least ``MIN_VERSION_LINES`` of its lines carry a version or a
platform, so a snippet of annotated fields (``name: str``) is never one, and an exception line
(``ValueError: 1.5 is not valid``) is never part of one: it is the report's error message.
"""

from __future__ import annotations

import re
from typing import Final

from veranda_dagster.domain.core.bounds import MAX_EXTRACT_TEXT_CHARS

MIN_VERSION_LINES: Final = 2
"""Lines of a ``Name: value`` run that must name a version or a platform for the run to be an
environment block: one such line is as often a sentence (``Fixed in: 3.2``) as a setup."""
MAX_KEY_CHARS: Final = 40
"""The longest name of an environment line (``optional deps. installed``, ``Version of
Python``); longer text before a colon is a sentence."""

_KEY_VALUE = re.compile(
    rf"^\s*(?:[-*+]\s+)?(?:\*\*)?[A-Za-z][\w .()/-]{{0,{MAX_KEY_CHARS - 1}}}?"
    r"(?:\*\*)?[ \t]*:[ \t]+\S"
)
_VERSION_OR_PLATFORM = re.compile(
    r"\d+\.\d+|x86_64|amd64|arm64|aarch64|\b(?:Linux|Darwin|Windows|macOS)\b"
)
_EXCEPTION_LINE = re.compile(rf"^\s*[\w.]{{0,{MAX_KEY_CHARS}}}?(?:Error|Exception|Warning)[ \t]*:")
"""An exception line (``pkg.errors.ParseError: …``) among ``Name: value`` lines. It is only
asked of lines whose name fits ``MAX_KEY_CHARS``, so the same bound keeps its work per line
small and reads every exception name such a line can hold."""
_TASK_ITEM = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s")


def _in_block(line: str) -> bool:
    return bool(
        _KEY_VALUE.match(line) and not _TASK_ITEM.match(line) and not _EXCEPTION_LINE.match(line)
    )


def boilerplate_lines(text: str) -> set[int]:
    """Indices (in ``text.split("\\n")``) of the task-list items and environment-block lines
    among the first ``MAX_EXTRACT_TEXT_CHARS`` characters; what lies past them is read as it is."""
    lines = text[:MAX_EXTRACT_TEXT_CHARS].split("\n")
    found = {i for i, line in enumerate(lines) if _TASK_ITEM.match(line)}
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and _in_block(lines[end]):
            end += 1
        versions = sum(1 for line in lines[start:end] if _VERSION_OR_PLATFORM.search(line))
        if versions >= MIN_VERSION_LINES:
            found.update(range(start, end))
        start = max(end, start + 1)
    return found


def split_boilerplate(text: str) -> tuple[str, str]:
    """``(report, boilerplate)``: the text without its boilerplate lines, and those lines."""
    drop = boilerplate_lines(text)
    if not drop:
        return text, ""
    lines = text.split("\n")
    kept = [line for i, line in enumerate(lines) if i not in drop]
    return "\n".join(kept), "\n".join(lines[i] for i in sorted(drop))
