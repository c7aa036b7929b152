"""A report that nests past the JSON parser's recursion is a typed ``InputError`` from every
reader that takes a report as text, and nothing at all from the ones that try any text; a
report nested as deep as a real one is still read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.work.code_quality import (
    parse_any_report,
    parse_code_climate,
    parse_security_report,
)
from veranda_dagster.domain.work.static_analysis import (
    parse_eslint_json,
    parse_golangci_json,
    parse_report,
    parse_ruff_json,
    parse_sarif,
)

DEEP = "[" * 10_000 + "]" * 10_000
"""Past CPython's default recursion limit: the decoder raises ``RecursionError``."""

READERS: dict[str, Callable[[str], Any]] = {
    "sarif": parse_sarif,
    "ruff": parse_ruff_json,
    "golangci": parse_golangci_json,
    "eslint": parse_eslint_json,
    "code climate": parse_code_climate,
    "security": parse_security_report,
}


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_a_report_nested_past_the_parser_is_a_typed_error(read: Callable[[str], Any]) -> None:
    with pytest.raises(InputError, match="nests deeper than JSON is read"):
        read(DEEP)


@pytest.mark.parametrize("read", [parse_report, parse_any_report])
def test_the_any_text_readers_find_no_report_in_it(read: Callable[[str], Any]) -> None:
    assert read("ruff output:\n" + DEEP) == []


def test_a_report_nested_as_deep_as_a_real_one_is_still_read() -> None:
    """The twin: a ruff finding whose ``fix`` carries fifty levels of nesting."""
    pad = "[" * 50 + "]" * 50
    text = (
        '[{"code": "F401", "filename": "app/x.py", "message": "unused", '
        '"location": {"row": 3, "column": 1}, "end_location": {"row": 3, "column": 9}, '
        f'"fix": {pad}}}]'
    )
    assert [(v.rule, v.line) for v in parse_ruff_json(text)] == [("F401", 3)]
