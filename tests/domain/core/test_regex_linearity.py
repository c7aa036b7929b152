"""Every regular expression the product compiles is linear over hostile text, or names the
bound that keeps its input short.

The ticket, every comment, the repository's files and the agent's output are hostile, and a
pattern that backtracks over a run (``^\\s*(?:…|.*x)``, an optional prefix that can start at
every dot) costs time in the square of the run: a megabyte of whitespace in a repository's test
file once made the testcontainers scan take hours (``facts._TESTCONTAINERS``), and a run of
``a.a.a.`` in a ticket 3 s of detection (``repo_settings._KEY_WRITTEN``). ``test_text_bounds``
drives the extractors it knows; this test finds every module-level pattern by itself, and every
literal pattern a function passes to ``re`` (read from the source), so a new one is measured the
day it is written. Each is run (``finditer``, the widest use) over
``SMALL_CHARS`` and eight times that of each worst shape (``tests.support.linearity``).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

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

OLD_FACTS_PATTERN = re.compile(r"^\s*(?:from\s+x|.*require\(x)", re.MULTILINE)
"""The pattern facts.py had: a leading ``\\s*`` before alternatives starting with ``.*``."""


BOUNDED_INPUT: dict[str, str] = {
    "context.code_search._DOTTED_NAME": "fullmatch on one seed, at most MAX_SEED_CHARS",
    "intake.ticket_signals._DYNAMIC": "one error message, at most MAX_MESSAGE_CHARS",
    "work.turn._TEST_NAME": "match on one file name",
    "intake.repo_usage._QUALIFIER_BEFORE": "search over the 40 characters before a name",
    "intake.repo_settings._SUB_AFTER": "match at a command's end only: each run is read once",
    "intake.repo_evidence._VERSION_AFTER": "match at a mention's end only: each run read once",
}
"""Patterns never run over a whole text: where each is applied, and what bounds it."""


LOCAL_BOUNDED_INPUT: dict[str, str] = {
    "context.code_search.looks_like_path": "fullmatch on one seed",
    "intake.repo_subcommands._decorated": "match at the start of one decorator's argument",
}
"""Patterns written inside a function and never run over a whole text: ``<module>.<function>``
(``[i]`` for its i-th literal pattern when it has several), and what bounds each."""

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


_RE_CALLS = frozenset(
    {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
)
_FLAG_ARGUMENT = {"compile": 1, "split": 3, "sub": 4, "subn": 4}
"""Where each ``re`` function takes its flags positionally (the others: third, index 2)."""


def _flags(node: ast.expr | None) -> int:
    """``re.I | re.M`` written in the call, as the number ``re`` gives it."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return int(getattr(re, node.attr)) if node.value.id == "re" else 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flags(node.left) | _flags(node.right)
    return 0


def _literal_pattern(call: ast.Call) -> re.Pattern[str] | None:
    """The pattern of ``re.<func>("literal", …)``, compiled with the flags the call passes."""
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "re"
        and func.attr in _RE_CALLS
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ):
        return None
    at = _FLAG_ARGUMENT.get(func.attr, 2)
    flags = next((kw.value for kw in call.keywords if kw.arg == "flags"), None)
    if flags is None and len(call.args) > at:
        flags = call.args[at]
    return re.compile(call.args[0].value, _flags(flags))


def _local_patterns() -> dict[str, re.Pattern[str]]:
    """Every literal pattern a product function passes to ``re`` (``re.split(r"[\\s_-]+", …)``),
    which the module walk above cannot see, named ``<module>.<function>`` (``[i]`` when the
    function has several). Patterns built at run time (``re.escape`` of a name) are not here."""
    root = Path(product.__file__).parent
    found: dict[str, re.Pattern[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        if f"{product.__name__}.{module}".startswith(NOT_PRODUCT):
            continue
        short = module.removeprefix("domain.")
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
            patterns = [p for p in map(_literal_pattern, calls) if p is not None]
            for i, pattern in enumerate(patterns):
                name = f"{short}.{function.name}" + (f"[{i}]" if len(patterns) > 1 else "")
                found.setdefault(name, pattern)
    return found


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


def test_every_pattern_written_inside_a_function_is_linear_or_names_its_bound() -> None:
    patterns = _local_patterns()
    assert len(patterns) > 30  # the scan found the functions' patterns, not an empty tree
    problems = {
        name: found
        for name, pattern in sorted(patterns.items())
        if name not in LOCAL_BOUNDED_INPUT and (found := _superlinear(pattern))
    }
    assert problems == {}


def test_every_bounded_pattern_still_exists() -> None:
    """An entry whose pattern was renamed or removed would silently exempt its successor."""
    assert set(BOUNDED_INPUT) <= set(_product_patterns())
    assert set(LOCAL_BOUNDED_INPUT) <= set(_local_patterns())


def test_the_function_scan_finds_a_backtracking_pattern_written_inline() -> None:
    """The scan reads a function's own ``re`` calls with their flags: the old facts.py pattern
    written inline is found as the pattern the check below catches."""
    source = (
        "import re\n"
        "def scan(text):\n"
        "    return re.findall(r'^\\s*(?:from\\s+x|.*require\\(x)', text, re.MULTILINE)\n"
    )
    call = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call))
    pattern = _literal_pattern(call)
    assert pattern is not None
    assert pattern.pattern == OLD_FACTS_PATTERN.pattern  # measured superlinear below
    assert pattern.flags == OLD_FACTS_PATTERN.flags


def test_the_check_catches_a_backtracking_pattern() -> None:
    assert _superlinear(OLD_FACTS_PATTERN)
    assert not _superlinear(re.compile(r"^[ \t]*from[ \t]+x|require\(x", re.MULTILINE))
