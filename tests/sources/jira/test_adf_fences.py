"""Fenced blocks in a posted message: the same pieces the regex reading gave, in linear work.

The oracle is the former single regex (an opening line, the shortest body, a closing line),
which rescanned the rest of the text from every unclosed opening; the line reading must split
every text as it did, and a long run of unclosed openings must cost linear time."""

from __future__ import annotations

import random
import re
import time

from veranda_dagster.sources.jira.adf import _chunks, text_to_adf

_ORACLE = re.compile(r"^```([\w+-]*)\n(.*?)\n?^```[ \t]*$", re.M | re.S)
ATOMS = ("```", "```py", "```c++", " ```", "``` ", "a", "b c", "\n", "\n", "\n", " ", "\t", "x```")
CASES = 5_000
UNCLOSED_RUN_BOUND_S = 1.0
"""Half a megabyte of unclosed openings: milliseconds linear; the oracle took 2.8 s for 32 kB."""


def _oracle(text: str) -> list[tuple[str, str, str]]:
    out, pos = [], 0
    for m in _ORACLE.finditer(text):
        out += [("text", text[pos : m.start()], ""), ("code", m.group(2), m.group(1))]
        pos = m.end()
    return [*out, ("text", text[pos:], "")]


def test_the_line_reading_splits_every_text_as_the_regex_did() -> None:
    rng = random.Random(7)
    for _ in range(CASES):
        text = "".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 14)))
        assert _chunks(text) == _oracle(text), repr(text)


def test_pairs_unclosed_openings_and_languages() -> None:
    text = "see\n```py\nx = 1\n```\n```sh\nno close\n```c\n"
    assert _chunks(text) == [
        ("text", "see\n", ""),
        ("code", "x = 1", "py"),
        ("text", "\n```sh\nno close\n```c\n", ""),
    ]
    assert [n["type"] for n in text_to_adf(text)["content"]][:2] == ["paragraph", "codeBlock"]


def test_a_run_of_unclosed_openings_costs_linear_work() -> None:
    text = "```a\n" * 100_000
    started = time.process_time()
    assert _chunks(text) == [("text", text, "")]
    assert time.process_time() - started < UNCLOSED_RUN_BOUND_S
