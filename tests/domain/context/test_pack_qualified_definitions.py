"""Issue 35, windows on the edit: a ticket writes the call it makes (``nx_agraph.to_agraph(G)``,
``Parser.parse_test``), and the search finds that qualified text in docstrings and examples,
not on the ``def`` line. Where the qualifier is the file's module or a class it defines, the
definition of the name is a strong line, so its whole function is packed."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.pack_windows import (
    MAX_DEFINITION_SCAN_LINES,
    MAX_NAMED_DEFINITIONS,
    module_name,
    qualified_definitions,
)
from veranda_dagster.domain.context.retrieval import build_pack


def _function(name: str, marker: str = "", indent: str = "", length: int = 30) -> str:
    body = "".join(f"{indent}    step_{k:02d} = helper({k})  # body line\n" for k in range(length))
    edit = f"{indent}    {marker} = 1  # the line a fix changes\n" if marker else ""
    return f"{indent}def {name}(graph):\n{body}{edit}{indent}    return graph\n\n\n"


HEAD = '"""Graph conversion.\n\nExample: ``nx.nx_agraph.to_agraph(G)`` converts ``G``.\n"""\n\n\n'
MODULE = HEAD + _function("from_agraph", length=40) + _function("to_agraph", "edited_line")
TWICE = (
    HEAD
    + _function("from_agraph", length=40)
    + "class First:\n"
    + _function("to_agraph", "edited_line", indent="    ")
    + "class Second:\n"
    + _function("to_agraph", indent="    ")
)


@pytest.mark.parametrize(
    ("case", "path", "text", "seed", "packed"),
    [
        ("the qualifier is the module", "pkg/nx_agraph.py", MODULE, "nx_agraph.to_agraph", True),
        ("a longer qualified call", "pkg/nx_agraph.py", MODULE, "nx.nx_agraph.to_agraph", True),
        (
            "adversarial: the qualifier is a variable, not the module",
            "pkg/convert.py",
            MODULE.replace("nx_agraph.to_agraph", "graph.to_agraph"),
            "graph.to_agraph",
            False,
        ),
        (
            "adversarial: the name is defined twice in the module",
            "pkg/nx_agraph.py",
            TWICE,
            "nx_agraph.to_agraph",
            False,
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and " " in value and len(value) < 80 else "",
)
def test_a_qualified_seed_packs_the_definition_its_qualifier_points_to(
    tmp_path, case, path, text, seed, packed
):
    repo = make_repo(tmp_path / "repo", {path: text})
    # one search: the relaxed variant (``to_agraph`` alone) would find the ``def`` line itself
    pack = build_pack([seed], LocalGitGrep(repo), max_searches=1)
    [file] = pack.files
    edit = next(n for n, line in enumerate(text.splitlines(), 1) if "edited_line = 1" in line)
    assert edit - 3 > 60, case  # far beyond the docstring hit's window and its widening
    assert any(w.start <= edit <= w.end for w in file.windows) is packed, case


PARSER = (
    "class Parser:\n"
    + _function("parse_test", indent="    ")
    + _function("parse_expression", indent="    ")
    + "class Other:\n"
    + _function("parse_test", indent="    ")
)
_LINES = PARSER.splitlines(keepends=True)
_PARSER_TEST = 2  # ``def parse_test`` inside ``class Parser``
_OTHER_CLASS = PARSER.splitlines().index("class Other:") + 1
_OTHER_TEST = _OTHER_CLASS + 1


@pytest.mark.parametrize(
    ("case", "path", "pairs", "expected"),
    [
        (
            "a method of a class the file defines",
            "pkg/parser.py",
            [("Parser", "parse_test")],
            [_PARSER_TEST],
        ),
        ("the other class's method", "pkg/parser.py", [("Other", "parse_test")], [_OTHER_TEST]),
        (
            "the module as qualifier, name unique",
            "pkg/parser.py",
            [("parser", "Other")],
            [_OTHER_CLASS],
        ),
        (
            "adversarial: the module as qualifier, the name defined in two classes",
            "pkg/parser.py",
            [("parser", "parse_test")],
            [],
        ),
        (
            "adversarial: a class the file does not define",
            "pkg/parser.py",
            [("Lexer", "parse_test")],
            [],
        ),
        (
            "adversarial: a name the class does not define",
            "pkg/parser.py",
            [("Other", "parse_expression")],
            [],
        ),
        ("adversarial: no qualified seed", "pkg/parser.py", [], []),
    ],
)
def test_qualified_definitions_by_module_or_class(case, path, pairs, expected):
    assert _LINES[_PARSER_TEST - 1].strip().startswith("def parse_test")
    assert qualified_definitions(path, _LINES, pairs) == expected, case


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("pkg/nx_agraph.py", "nx_agraph"),
        ("pkg/sub/__init__.py", "sub"),
        ("__init__.py", "__init__"),
        ("src/lib.rs", "lib"),
    ],
)
def test_module_name(path, name):
    assert module_name(path) == name


def test_at_most_max_named_definitions_per_file() -> None:
    names = [f"step_{i}" for i in range(MAX_NAMED_DEFINITIONS + 1)]
    lines = [f"def {name}():\n    pass\n" for name in names]
    found = qualified_definitions("pkg/flow.py", lines, [("flow", n) for n in names])
    assert found == [1 + i for i in range(MAX_NAMED_DEFINITIONS)]


def test_a_definition_past_the_scanned_lines_is_not_found() -> None:
    filler = ["x = 1\n"] * (MAX_DEFINITION_SCAN_LINES - 1)
    inside = [*filler, "def last_read():\n"]
    past = [*filler, "y = 2\n", "def too_far():\n"]
    assert qualified_definitions("pkg/flow.py", inside, [("flow", "last_read")]) == [
        MAX_DEFINITION_SCAN_LINES
    ]
    assert qualified_definitions("pkg/flow.py", past, [("flow", "too_far")]) == []
