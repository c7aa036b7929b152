"""Hostile input costs linear work at the entry points, not only in each regex.

``test_regex_linearity`` measures every module-level pattern and ``test_text_bounds`` the
ticket-text extractors; neither sees what the parsers a pattern never touches do: the TOML
parser over a planted ``pyproject.toml`` (quadratic in a dotted key's parts), or JSON and YAML
over a reply of brackets (a ``RecursionError`` that failed the step). Here each entry point that
reads a repository's manifests or a model's reply gets each worst shape at ``SMALL_CHARS`` and
eight times that (``tests.support.linearity``), and it must finish (a parser's
``RecursionError`` is a failure, not a skip).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.linearity import superlinear
from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.context.prose_modules import prose_named_modules
from veranda_dagster.domain.deliver import review
from veranda_dagster.domain.intake import repo_config_keys, repo_definitions, repo_subcommands
from veranda_dagster.domain.intake.repo_confirmation import parse_confirmation
from veranda_dagster.domain.intake.repo_vocabulary import read_vocabulary
from veranda_dagster.domain.intake.report_boilerplate import split_boilerplate
from veranda_dagster.domain.work.static_analysis import json_in_text
from veranda_dagster.environment.defaults import python_requirements
from veranda_dagster.sources.jira.adf import text_to_adf
from veranda_dagster.sources.registry import keys_mentioned
from veranda_dagster.vendors.plugins import claude, codex, cursor, gemini, glm, grok, kimi
from veranda_dagster.vendors.port import StreamParseError

SMALL_CHARS = 8_192
MEASURABLE_S = 0.05
"""Below this the large run is too fast for a quadratic to hide in (``a.`` took 1 s at 64 kB)."""
TIMER_FLOOR_S = 1e-3
"""A small run counts at least this: an entry point's start-up (a temporary file) is noise."""

WORST_SHAPES = (
    "a", "a.", " \t", "\n", " \n", "a\n", "a = 1\n", "a.b = 1\n", "[a.", "[[a.", "`a` ",
    ".. a::\n", "a:\n", "a: b\n", "- a\n", '"', "'", "(", "[", "{", '"a": {', '{"a": [',
    "def a():\n", "class A:\n", "@a.command()\n", "add_parser('a', ", "A_B = 1\n", "    ",
    "x" * 999 + "\n", "# a\n", "\\", "a=", '"\u2028".', "```\n", "a\n\n", "ENG-1 ", "<@U1|",
)  # fmt: skip


class _Files:
    """A forge whose every file holds the hostile text and whose every folder lists the names
    each vocabulary reader looks for, so every reader meets it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def read_repository_file(self, full_name: str, path: str) -> str | None:
        return self.text

    def list_repository_dir(self, full_name: str, path: str) -> list[str] | None:
        return [
            "a/", "docs/", "commands/", "pyproject.toml", "setup.cfg", "setup.py",
            "package.json", "Cargo.toml", "cli.py", "config.py", "settings.py", "schema.json",
            "configuration.rst", "__init__.py", ".pre-commit-hooks.yaml",
        ]  # fmt: skip


def _facts(manifest: str) -> Callable[[str, Path], object]:
    def run(text: str, tmp: Path) -> object:
        (tmp / manifest).write_text(text, encoding="utf-8")
        return read_repo_facts(tmp)

    return run


def _requirements(text: str, tmp: Path) -> object:
    (tmp / "pyproject.toml").write_text(text, encoding="utf-8")
    return python_requirements(RepoFiles(tmp))


def _kimi_wire(text: str, tmp: Path) -> object:
    (tmp / "wire.jsonl").write_text(text, encoding="utf-8")
    return kimi.read_kimi_wire(tmp / "wire.jsonl")


def _stream(parse: Callable[[str], object]) -> Callable[[str], object]:
    def run(text: str) -> object:
        try:
            return parse(text)
        except StreamParseError:  # the typed refusal is the answer; anything else fails
            return None

    return run


TEXT_ENTRY_POINTS: dict[str, Callable[[str], object]] = {
    "read_vocabulary": lambda t: read_vocabulary("acme/a", _Files(t)),
    "page_keys": repo_config_keys.page_keys,
    "schema_keys": repo_config_keys.schema_keys,
    "module_keys": repo_config_keys.module_keys,
    "declared_subcommands": lambda t: repo_subcommands.declared_subcommands(t, "a/cli.py"),
    "public_top_level_names": repo_definitions.public_top_level_names,
    "review_reply": review.parse_findings,
    "confirmation_reply": parse_confirmation,
    "tool_report": json_in_text,
    "claude_stream": _stream(claude.parse_claude_stream),
    "codex_stream": _stream(codex.parse_codex_stream),
    "cursor_stream": _stream(cursor.parse_cursor_stream),
    "gemini_stream": _stream(gemini.parse_gemini_stream),
    "opencode_stream": _stream(glm.parse_opencode_stream),
    "grok_stream": _stream(grok.parse_grok_stream),
    "kimi_stream": _stream(kimi.parse_kimi_stream),
    "jira_text_to_adf": text_to_adf,
    "ticket_keys_mentioned": lambda t: list(keys_mentioned(t)),
    "report_boilerplate": split_boilerplate,
    "prose_modules": lambda t: prose_named_modules(t, ["a/a_b.py", "a/ab.py", "a/x_y.py"]),
}

REPO_ENTRY_POINTS: dict[str, Callable[[str, Path], object]] = {
    "facts_pyproject": _facts("pyproject.toml"),
    "facts_cargo": _facts("Cargo.toml"),
    "facts_package_json": _facts("package.json"),
    "python_requirements": _requirements,
    "kimi_wire": _kimi_wire,
}


def _superlinear(run: Callable[[str], object]) -> list[str]:
    return superlinear(run, WORST_SHAPES, SMALL_CHARS, MEASURABLE_S, TIMER_FLOOR_S)


@pytest.mark.parametrize("name", sorted(TEXT_ENTRY_POINTS))
def test_each_text_entry_point_is_linear_over_each_worst_shape(name):
    assert _superlinear(TEXT_ENTRY_POINTS[name]) == []


@pytest.mark.parametrize("name", sorted(REPO_ENTRY_POINTS))
def test_each_repository_reader_is_linear_over_a_hostile_manifest(name, tmp_path):
    run = REPO_ENTRY_POINTS[name]
    assert _superlinear(lambda text: run(text, tmp_path)) == []


def test_the_check_catches_a_quadratic_parser():
    """The TOML parser without the line bound: one line of ``a.`` grows about 64x."""

    def unbounded(text: str) -> object:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None

    assert _superlinear(unbounded)
