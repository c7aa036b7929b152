"""Which programming language a source file is in, and which one a tree is mostly written in.

Why: a fix stays in the language the project is written in far more often than it crosses into
a bundled extension (a C# module utility in a Python tool, a Rust crate behind a Python API, a
C bootloader). The ticket's prose matches those files' identifiers as well as the Python ones,
so the pack ranks a file of another language than the tree's main one a little lower
(``retrieval.OTHER_LANGUAGE_FACTOR``); a file the evidence clearly points to still makes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from veranda_dagster.domain.context.full_text import SOURCE_SUFFIXES

_VENDOR = {
    "pyi": "py", "pyx": "py",
    "jsx": "js", "mjs": "js", "cjs": "js", "tsx": "ts",
    "h": "c", "cc": "cpp", "hpp": "cpp",
    "kts": "kt", "exs": "ex", "bash": "sh",
}  # fmt: skip
"""Suffixes of one language (a header with its sources, TSX with TypeScript)."""


def language_of(path: str) -> str | None:
    """The file's language as its canonical suffix (``py``, ``ts``…); ``None`` for a file that
    is not program text (docs, data, config)."""
    if "." not in path.rsplit("/", 1)[-1]:
        return None
    suffix = path.rsplit(".", 1)[-1].lower()
    if suffix not in SOURCE_SUFFIXES:
        return None
    return _VENDOR.get(suffix, suffix)


def dominant_language(paths: Iterable[str]) -> str | None:
    """The language most of the tree's source files are in (ties: the alphabetically first);
    ``None`` for a tree with no source file."""
    counts = Counter(lang for path in paths if (lang := language_of(path)) is not None)
    if not counts:
        return None
    return min(counts, key=lambda lang: (-counts[lang], lang))
