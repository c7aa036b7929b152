"""JSON, YAML and TOML read from a hostile source (a repository's manifest, a model's reply, a
vendor stream line), parsed within bounds or not at all.

Every parser here recurses once per nesting level, so ten thousand ``[`` end in a
``RecursionError`` that the callers' ``except ValueError`` did not catch: a planted
``package.json`` or a reply of brackets failed the whole step instead of reading as "not a
document". And the TOML parser copies a dotted key's parts once per part, so one line of
``a.a.a.…`` costs time in the square of its length (``MAX_TOML_LINE_DOTS``). Each reader returns
``None`` where the text is not a document it can read cheaply, which is what its callers already
do for malformed text. Configuration files an operator hands us go through ``input_files``
instead, which names the refusal.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import yaml

from veranda_dagster.domain.core.bounds import MAX_TOML_LINE_DOTS


def json_or_none(text: str | bytes) -> Any | None:
    """The parsed JSON value, or ``None`` when ``text`` is not JSON or nests past the
    parser's recursion."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def yaml_or_none(text: str) -> Any | None:
    """The parsed YAML value, or ``None`` when ``text`` is not YAML or nests past the parser's
    recursion."""
    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):
        return None


_ONE_LINE_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'[^'\n]*'""")
"""A basic or literal string on one line (a value, or a quoted key part): its dots separate no
key parts (``"1.2.3"``, ``"a.b".c`` is two parts)."""


def toml_dots_bounded(text: str) -> bool:
    """Whether every line holds at most ``MAX_TOML_LINE_DOTS`` dots outside its one-line
    strings: the dots that can separate key parts (a pinned dependency list on one line is
    read). Split on ``\\n`` only: TOML ends a line there, and a quoted key part may hold the
    other characters ``str.splitlines`` breaks on (``\\u2028``), which would hide a long key
    across "lines"."""
    return all(
        _ONE_LINE_STRING.sub("", line).count(".") <= MAX_TOML_LINE_DOTS for line in text.split("\n")
    )


def toml_or_none(text: str) -> dict[str, Any] | None:
    """The parsed TOML table, or ``None`` when ``text`` is not TOML, nests past the parser's
    recursion, or holds a line of more than ``MAX_TOML_LINE_DOTS`` dots outside its strings."""
    if not toml_dots_bounded(text):
        return None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
