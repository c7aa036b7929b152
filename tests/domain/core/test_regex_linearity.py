"""Every regular expression the product compiles is linear over hostile text, or names the
bound that keeps its input short.

The ticket, every comment, the repository's files and the agent's output are hostile, and a
pattern that backtracks over a run (``^\\s*(?:…|.*x)``, an optional prefix that can start at
every dot) costs time in the square of the run: a megabyte of whitespace in a repository's test
file once made the testcontainers scan take hours (``facts._TESTCONTAINERS``), and a run of
``a.a.a.`` in a ticket 3 s of detection (``repo_settings._KEY_WRITTEN``). ``test_text_bounds``
drives the extractors it knows; this test finds every module-level pattern by itself, so a new
one is measured the day it is written. Each is run (``finditer``, the widest use) over
``SMALL_CHARS`` and eight times that of each worst shape (``tests.support.linearity``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import veranda_dagster as product
from tests.support.linearity import superlinear

SMALL_CHARS = 2_000
MEASURABLE_S = 0.01
"""Below this the large run is too fast for a quadratic to hide in (one took 0.6 s at 16 kB)."""
TIMER_FLOOR_S = 1e-4
"""A small run counts at least this: a pattern over 2,000 characters takes microseconds."""

WORST_SHAPES = (
    "a", "a.", "a/", "a-", "a_", "aB", "_a", "A_", "a@", "a:", "a:1", "a(", "`a", "{", " \t",
    "a =", "a=", "@a.", "a,", "'a", '"a', "| a", "# a", "--a ", "a\n", " a\n", "\n\n", "#L1-",
    "[R1", "http://a", "a\\", "~/a", "<a", "a>", "0x", "1.", "E ", "> a\n",
)  # fmt: skip

BOUNDED_INPUT: dict[str, str] = {
    "context.code_search._DOTTED_NAME": "fullmatch on one seed, at most MAX_SEED_CHARS",
    "intake.ticket_signals._DYNAMIC": "one error message, at most MAX_MESSAGE_CHARS",
    "work.turn._TEST_NAME": "match on one file name",
    "intake.repo_usage._QUALIFIER_BEFORE": "search over the 40 characters before a name",
    "intake.repo_settings._SUB_AFTER": "match at a command's end only: each run is read once",
    "intake.repo_evidence._VERSION_AFTER": "match at a mention's end only: each run read once",
}
"""Patterns never run over a whole text: where each is applied, and what bounds it."""


NOT_PRODUCT = "veranda_dagster.sim."
"""The simulation's fakes (forges, trackers, the scripted model) read only what the tests and
``veranda demo`` feed them."""


def _product_patterns() -> dict[str, re.Pattern[str]]:
    """Every module-level pattern of the product, named ``<module without the package
    prefix>.<name>``; the domain's under ``domain.`` no more: ``context.facts._TESTCONTAINERS``."""
    found: dict[str, re.Pattern[str]] = {}
    for info in pkgutil.walk_packages(product.__path__, product.__name__ + "."):
        if info.name.startswith(NOT_PRODUCT):
            continue
        module = importlib.import_module(info.name)
        short = info.name.removeprefix(product.__name__ + ".").removeprefix("domain.")
        for name, value in vars(module).items():
            for key, pattern in _patterns_in(name, value):
                found.setdefault(f"{short}.{key}", pattern)
    return found


def _patterns_in(name: str, value: object) -> list[tuple[str, re.Pattern[str]]]:
    """A module attribute's text patterns: itself, or those in a tuple, list or dict of them
    (``redaction``'s token shapes, ``patch``'s coverage lines), named ``NAME[i]``/``NAME[key]``."""
    if isinstance(value, re.Pattern):
        return [(name, value)] if isinstance(value.pattern, str) else []
    items: list[tuple[object, object]] = []
    if type(value) in (tuple, list):  # exactly: a record or a NamedTuple is not a pattern list
        items = list(enumerate(value))  # type: ignore[arg-type]
    elif type(value) is dict:
        items = list(value.items())  # type: ignore[attr-defined]
    return [
        (f"{name}[{key}]", item)
        for key, item in items
        if isinstance(item, re.Pattern) and isinstance(item.pattern, str)
    ]


def _superlinear(pattern: re.Pattern[str]) -> list[str]:
    """``pattern`` run the widest way (``finditer`` over the whole text) over each shape."""

    def run(text: str) -> None:
        for _ in pattern.finditer(text):
            pass

    return superlinear(run, WORST_SHAPES, SMALL_CHARS, MEASURABLE_S, TIMER_FLOOR_S)


def test_every_product_pattern_is_linear_or_names_its_bound() -> None:
    patterns = _product_patterns()
    assert len(patterns) > 150  # the walk found the product's patterns, not an empty package
    problems = {
        name: found
        for name, pattern in sorted(patterns.items())
        if name not in BOUNDED_INPUT and (found := _superlinear(pattern))
    }
    assert problems == {}


def test_every_bounded_pattern_still_exists() -> None:
    """An entry whose pattern was renamed or removed would silently exempt its successor."""
    assert set(BOUNDED_INPUT) <= set(_product_patterns())


def test_the_check_catches_a_backtracking_pattern() -> None:
    """The pattern facts.py had: a leading ``\\s*`` before alternatives starting with ``.*``."""
    old = re.compile(r"^\s*(?:from\s+x|.*require\(x)", re.MULTILINE)
    assert _superlinear(old)
    assert not _superlinear(re.compile(r"^[ \t]*from[ \t]+x|require\(x", re.MULTILINE))
