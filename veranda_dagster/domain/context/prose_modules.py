"""Modules the prose names in two words: "upstream proxy" for ``_upstream_proxy.py``.

Why: a module's name is often the noun phrase people use for its feature, written as two words
in a sentence and joined in the file name (``_``, ``-`` or nothing: ``contentview.py`` for
"content view"). No seed carries it (neither word is an identifier), and each word alone hits
many files. A phrase counts only when exactly one source file's stem is its two words joined,
so a generic pair ("file name", matched by several ``filename.py``) names nothing.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Final

from veranda_dagster.domain.context.seeds import PROSE_WORDS
from veranda_dagster.domain.context.source_language import language_of
from veranda_dagster.domain.core.bounds import MAX_EXTRACT_TEXT_CHARS

MIN_WORD_CHARS: Final = 3
"""Shorter words (``io``, ``db``) join into stems by accident (``io_db``)."""
MAX_NAMED_MODULES: Final = 2
"""Phrases that may each name a file: a report names its feature once or twice; past that the
pairs are a long text's chance matches."""
_TOKEN = re.compile(r"\S+")
_WORD = re.compile(r"[a-z]+")
_PUNCTUATION = ".,;:!?()[]\"'"
"""What a sentence puts around a word; a token with anything else (``_``, ``/``, ``.`` inside,
a backtick) is code or a path, read by the seeds, not prose."""


def _words(text: str) -> list[str | None]:
    """The text's whitespace-separated tokens, each a lower-case prose word or ``None``."""
    out: list[str | None] = []
    for token in _TOKEN.findall(text[:MAX_EXTRACT_TEXT_CHARS].lower()):
        word = token.strip(_PUNCTUATION)
        out.append(word if _WORD.fullmatch(word) else None)
    return out


def _singular(word: str) -> str:
    """``proxies`` -> ``proxy``, ``views`` -> ``view``: a module is named in the singular."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > MIN_WORD_CHARS:
        return word[:-1]
    return word


def prose_named_modules(text: str, repo_paths: list[str]) -> list[str]:
    """The source files whose stem (leading underscores dropped) is two consecutive prose words
    joined, in the order the phrases appear; a phrase matching several files names none."""
    stems: dict[str, list[str]] = {}
    for path in repo_paths:
        if language_of(path) is None:
            continue
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lstrip("_").lower()
        stems.setdefault(stem, []).append(path)
    words = _words(text)
    found: list[str] = []
    for first, second in pairwise(words):
        if first is None or second is None:
            continue
        if min(len(first), len(second)) < MIN_WORD_CHARS or {first, second} & PROSE_WORDS:
            continue
        second = _singular(second)
        paths = {p for sep in ("_", "-", "") for p in stems.get(f"{first}{sep}{second}", [])}
        if len(paths) == 1 and (path := paths.pop()) not in found:
            found.append(path)
            if len(found) >= MAX_NAMED_MODULES:
                break
    return found
