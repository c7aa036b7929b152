"""A token shape must not match what is everywhere and never secret: commit SHAs, UUIDs, hex.

The scrubber masks every match of every registered shape in every text it cleans, so a shape
that also matches a 40-hex commit SHA blanks every SHA in a PR body, a citation and a log (it
happened: such a shape registered cleanly). Each registry (vendors, forges) asks this before it
accepts a shape, and refuses the plugin naming the shape and what it matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from veranda_dagster.domain.core.redaction import TokenShape

NEVER_SECRET: tuple[tuple[str, str], ...] = (
    ("a 40-hex commit SHA", "3f786850e387550fdab836ed7e6dc881de23001b"),
    ("a 64-hex SHA-256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("a short commit SHA", "3f78685"),
    ("a UUID", "123e4567-e89b-42d3-a456-426614174000"),
    ("a plain hex sample", "0123456789abcdef0123456789abcdef"),
    ("upper-case hex", "0123456789ABCDEF0123456789ABCDEF"),
)
"""Texts the scrubber must leave alone, each with what it is; a shape matching any part of
one is refused."""

_TOKEN_START = r"(?<![A-Za-z0-9_-])"
"""The scrubber's own guard (``redaction._TOKEN_START``): a match starts where a run does."""


def shape_problems(shape: TokenShape) -> list[str]:
    """What is wrong with ``shape`` as a registered token shape: it does not match its own
    sample, or it matches something in ``NEVER_SECRET``; empty when it is fine."""
    problems = []
    if not re.fullmatch(shape.pattern, shape.sample):
        problems.append(f"token shape {shape.name!r} does not match its own sample")
    guarded = re.compile(_TOKEN_START + f"(?:{shape.pattern})")
    for label, text in NEVER_SECRET:
        if guarded.search(text):
            problems.append(
                f"token shape {shape.name!r} matches {label} ({text}): the scrubber would "
                "blank every one in every text"
            )
    return problems


def shapes_problems(shapes: Iterable[TokenShape]) -> list[str]:
    return [problem for shape in shapes for problem in shape_problems(shape)]
