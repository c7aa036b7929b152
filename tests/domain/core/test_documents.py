"""Hostile documents: a JSON, YAML or TOML text from a repository, a reply or a stream is read
within bounds or read as "not a document", never a ``RecursionError`` and never quadratic work.

The old readers caught only the parsers' ``ValueError``: ten thousand ``[`` ended in a
``RecursionError`` that failed the whole step, and one line of ``a.a.a.…`` in a
``pyproject.toml`` cost the TOML parser time in the square of its length (64 kB: a second;
the megabyte ``read_repo_facts`` may read: minutes).
"""

from __future__ import annotations

import time

import pytest

from veranda_dagster.domain.core import documents
from veranda_dagster.domain.core.bounds import MAX_TOML_LINE_DOTS
from veranda_dagster.domain.core.documents import json_or_none, toml_or_none, yaml_or_none

DEEP = "[" * 100_000
"""Far past the recursion limit of every parser here, and still a tenth of a megabyte."""

KEY_OF = "a." * MAX_TOML_LINE_DOTS + "a"
"""A dotted key with exactly ``MAX_TOML_LINE_DOTS`` dots: the longest that is still read."""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[project]\nname = "acme"\n', {"project": {"name": "acme"}}),
        ('[tool.poetry]\nname = "a.b.c"\n', {"tool": {"poetry": {"name": "a.b.c"}}}),
        ("a.b.c = 1\n", {"a": {"b": {"c": 1}}}),
        ('v = ["1.2.3", "4.5.6"]\n', {"v": ["1.2.3", "4.5.6"]}),
        ("not = toml = at all", None),
        ("", {}),
    ],
)
def test_toml_reads_a_manifest_as_the_parser_does(text, expected):
    assert toml_or_none(text) == expected


def test_toml_reads_a_line_of_exactly_the_bound():
    parsed = toml_or_none(KEY_OF + " = 1\n")
    assert parsed is not None
    depth, node = 0, parsed
    while isinstance(node, dict):
        node, depth = node["a"], depth + 1
    assert (node, depth) == (1, MAX_TOML_LINE_DOTS + 1)


def test_toml_leaves_a_line_past_the_bound_unread():
    assert toml_or_none(KEY_OF + ".a = 1\n") is None
    assert toml_or_none("x = {" + KEY_OF + ".a = 1}\n") is None  # in an inline table too
    assert toml_or_none('"q".' + KEY_OF + " = 1\n") is None  # beside a quoted part


def test_dots_inside_one_line_strings_are_no_key_parts():
    """Adversarial twin: a pinned dependency list on one line holds many dots, all inside
    strings; it is read."""
    pins = ", ".join(f'"pkg{i}>=1.{i}.0"' for i in range(MAX_TOML_LINE_DOTS))
    parsed = toml_or_none(f"[project]\ndependencies = [{pins}]\n")
    assert parsed is not None and len(parsed["project"]["dependencies"]) == MAX_TOML_LINE_DOTS
    assert toml_or_none("d = '" + "." * (MAX_TOML_LINE_DOTS + 1) + "'\n") == {
        "d": "." * (MAX_TOML_LINE_DOTS + 1)
    }


def test_dots_spread_over_lines_are_not_one_key():
    """Adversarial twin: the bound is per line, so a long manifest with many dots in all is
    read whole (a dependency list of a thousand versions)."""
    text = "".join(f'k{i} = "{i}.{i}.{i}"\n' for i in range(1_000))
    parsed = toml_or_none(text)
    assert parsed is not None and parsed["k999"] == "999.999.999"


def test_a_line_separator_in_a_quoted_key_does_not_hide_its_dots():
    """``str.splitlines`` breaks on U+2028, which a quoted key part may hold; TOML does not,
    so ``"\\u2028"."\\u2028"…`` is one key of many parts and must count as one line."""
    key = '"\u2028".' * (MAX_TOML_LINE_DOTS + 1) + "a"
    assert toml_or_none(key + " = 1\n") is None
    assert documents.toml_dots_bounded('"\u2028".' * MAX_TOML_LINE_DOTS + "a = 1\n")


@pytest.mark.parametrize(
    "read",
    [json_or_none, yaml_or_none, toml_or_none, lambda t: toml_or_none("x = " + t)],
    ids=["json", "yaml", "toml", "toml-value"],
)
def test_a_document_nested_past_the_parser_is_not_a_document(read):
    assert read(DEEP) is None
    assert read("{" * 50_000) is None


def test_shallow_nesting_is_still_read():
    """Twin: a nesting a real document has (forty levels) parses as before."""
    assert json_or_none("[" * 40 + "]" * 40) is not None
    assert yaml_or_none("[" * 40 + "]" * 40) is not None
    assert toml_or_none("x = " + "[" * 40 + "]" * 40) is not None


def _cpu(text: str) -> float:
    started = time.thread_time()
    toml_or_none(text)
    return time.thread_time() - started


AT_THE_BOUND = "".join(f"k{i}." + "a." * (MAX_TOML_LINE_DOTS - 1) + "a = 1\n" for i in range(40))
"""Distinct keys each of exactly ``MAX_TOML_LINE_DOTS`` dots: the worst the bound lets in."""


@pytest.mark.parametrize("unit", ["a.", AT_THE_BOUND], ids=["one-line", "at-the-bound"])
def test_dotted_keys_cost_linear_work(unit):
    """Eight times the text costs at most 24 times the CPU (the old parse of one line of
    ``a.``: about 64 times, and 1 s at 64 kB)."""
    small = (unit * (16_384 // len(unit) + 1))[:16_384]
    large = (unit * (131_072 // len(unit) + 1))[:131_072]
    spent = _cpu(large)
    assert spent < 2.0
    if spent >= 0.05:
        assert spent / max(min(_cpu(small) for _ in range(3)), 1e-3) <= 24
