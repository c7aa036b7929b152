"""Model output bound for a forge, with any quote of this run's instructions withheld.

The instruction block written into the clone (``layers``: the generic prompt, the org's
runbooks, the repository hints) is private to the run; the PR body, a feedback reply and a
comment are public. A ticket or a comment can ask the model to print its instructions, and
a model may oblige, so every model text posted to a forge passes ``withhold_instructions``:
a line that carries the block's markers or heading, or shares any run of
``QUOTE_WORDS`` consecutive words with a private layer, is dropped and a note says how many
were. The repository facts layer is read off the code, so quoting it reveals nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from veranda_dagster.domain.context.layers import BEGIN, END
from veranda_dagster.domain.core.models import ContextLayer

QUOTE_WORDS: Final = 8
"""Consecutive words shared with a private layer that make a line a quote: fewer is a common
phrase ("keep the tests passing"), eight in a row is copying."""

PRIVATE_LAYERS: Final = frozenset({"generic", "org_runbooks", "repo_hints"})
"""The layers whose text never leaves the run (facts are read off the public code)."""

BLOCK_LINES: Final = (BEGIN, END, "# Veranda context", "_Source:")
"""Lines of the block itself: its delimiters, its heading and each layer's source line."""

_WORD = re.compile(r"[a-z0-9]+")


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + QUOTE_WORDS]) for i in range(len(words) - QUOTE_WORDS + 1)}


def private_shingles(layers: Iterable[ContextLayer]) -> set[tuple[str, ...]]:
    """Every run of ``QUOTE_WORDS`` words in the private layers."""
    found: set[tuple[str, ...]] = set()
    for layer in layers:
        if layer.name in PRIVATE_LAYERS:
            found |= _shingles(layer.text)
    return found


def withhold_instructions(text: str, layers: Iterable[ContextLayer]) -> str:
    """``text`` without the lines that quote the run's private instructions, and a note when
    any were dropped. A quote that spans a line break is caught by the shingles of each line
    long enough to hold ``QUOTE_WORDS`` words, and by the paragraph it sits in."""
    private = private_shingles(layers)
    kept: list[str] = []
    dropped = 0
    for paragraph in text.split("\n\n"):
        lines = paragraph.split("\n")
        if private and _shingles(paragraph) & private and len(lines) > 1:
            leaking = [line for line in lines if _shingles(line) & private]
            if not leaking:  # the quote runs across the lines: the paragraph goes
                dropped += len(lines)
                continue
        for line in lines:
            if any(marker in line for marker in BLOCK_LINES) or (_shingles(line) & private):
                dropped += 1
                continue
            kept.append(line)
        kept.append("")
    out = "\n".join(kept).strip("\n")
    if dropped:
        out += (
            f"\n\n_[veranda: {dropped} line(s) withheld: they quoted this run's private "
            "instructions]_"
        )
    return out
