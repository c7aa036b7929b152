"""Table tests for the second round of issue 35's file ranking: the project's tooling, a
package's reference docstring and a package ``__init__``'s imports no longer rank a file first,
and a callee the ticket names is first over the caller that names it. Each pack test runs the
real pack over a real git repository (``make_repo``) and asserts on the order it gives."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.module_docstring import (
    MAX_DOCSTRING_LINES,
    module_docstring_end,
)
from veranda_dagster.domain.context.pack_promotion import named_callee_first, promote_imported
from veranda_dagster.domain.context.pack_windows import FileEvidence
from veranda_dagster.domain.context.path_kinds import DOCS_FACTOR, TOOLING_FACTOR, tooling_factor
from veranda_dagster.domain.context.retrieval import (
    build_pack,
    rank_files,
    run_searches,
    seed_names,
)

# --- the project's tooling -------------------------------------------------------------------

TOOLING = [
    ("devscripts/make_issue_template.py", TOOLING_FACTOR),
    ("scripts/release.py", TOOLING_FACTOR),
    ("hacking/create-bulk-issues.py", TOOLING_FACTOR),
    ("packaging/release.py", TOOLING_FACTOR),
    ("tools/stress_test_pretty.py", TOOLING_FACTOR),
    ("benchmarks/bench_parse.py", TOOLING_FACTOR),
    ("setup.py", TOOLING_FACTOR),
    ("noxfile.py", TOOLING_FACTOR),
    ("qiskit/circuit/tools/pi_check.py", 1.0),  # a library's own tools/ folder is library code
    ("src/pkg/scripts/run.py", 1.0),
    ("pkg/setup.py", 1.0),
    ("pkg/mod.py", 1.0),
    ("toolsmith.py", 1.0),
]


@pytest.mark.parametrize(("path", "factor"), TOOLING, ids=[t[0] for t in TOOLING])
def test_top_level_tooling_is_discounted(path, factor):
    assert tooling_factor(path) == factor


def test_a_release_script_naming_the_version_no_longer_ranks_first(tmp_path):
    files = {
        "scripts/make_release.py": "# Python 3.12 release of mylib\n"
        + "".join(f"print('mylib Python {i} parse_date')\n" for i in range(6)),
        "mylib/__init__.py": "",
        "mylib/dates.py": "def parse_date(text):\n    return text.split('-')\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    ticket = "`parse_date` returns a list on Python 3.12 with mylib"
    pack = build_pack(["parse_date", "mylib"], LocalGitGrep(repo), ticket_text=ticket)
    paths = [f.path for f in pack.files]
    assert paths[0] == "mylib/dates.py"
    assert "scripts/make_release.py" in paths  # kept, only lower


# --- a module's docstring --------------------------------------------------------------------

DOCSTRINGS = [
    ("none", ["import os\n", "x = 1\n"], 0),
    ("one_line", ['"""The parser."""\n', "x = 1\n"], 1),
    ("multi_line", ['"""\n', "    pkg\n", "    ~~~\n", '"""\n', "x = 1\n"], 4),
    ("after_coding_and_blank", ["# -*- coding: utf-8 -*-\n", "\n", "'''Doc\n", "'''\n"], 4),
    ("raw_prefix", ['r"""A \\d doc\n', '"""\n', "x = 1\n"], 2),
    ("single_quote_one_line", ["'a module doc'\n", "x = 1\n"], 1),
    ("single_quote_unclosed", ["'not closed\n", "x = 1\n"], 0),
    ("string_later", ["x = 1\n", '"""not a docstring"""\n'], 0),
    ("never_closes", ['"""\n', "text\n"], 0),
    ("empty_file", [], 0),
]


@pytest.mark.parametrize(("form", "lines", "end"), DOCSTRINGS, ids=[d[0] for d in DOCSTRINGS])
def test_where_a_module_docstring_ends(form, lines, end):
    assert module_docstring_end(lines) == end


def test_a_docstring_longer_than_the_bound_is_not_read():
    within = ['"""\n', *["text\n"] * (MAX_DOCSTRING_LINES - 2), '"""\n']
    assert module_docstring_end(within) == MAX_DOCSTRING_LINES
    beyond = ['"""\n', *["text\n"] * MAX_DOCSTRING_LINES, '"""\n']
    assert module_docstring_end(beyond) == 0
    blank = ["\n"] * (MAX_DOCSTRING_LINES + 1) + ['"""doc"""\n']
    assert module_docstring_end(blank) == 0


REFERENCE_INIT = '''"""
Transpiler reference
====================

.. autosummary::

   LayoutPass
   RoutingPass
   LayoutPass.run
   RoutingPass.run
   LayoutPass options
   RoutingPass options
"""
from pkg.layout import LayoutPass
from pkg.routing import RoutingPass
'''
LAYOUT = """class LayoutPass:
    def run(self, dag):
        return dag
"""


def test_a_package_reference_docstring_does_not_outrank_the_defining_module(tmp_path):
    files = {
        "pkg/__init__.py": REFERENCE_INIT,
        "pkg/layout.py": LAYOUT,
        "pkg/routing.py": "class RoutingPass:\n    def run(self, dag):\n        return dag\n",
    }
    files.update({f"pkg/other{i}.py": f"def other_{i}(dag):\n    return dag\n" for i in range(6)})
    repo = make_repo(tmp_path / "repo", files)
    ticket = "`LayoutPass` and `RoutingPass` both fail: `LayoutPass` drops the dag"
    pack = build_pack(["LayoutPass", "RoutingPass"], LocalGitGrep(repo), ticket_text=ticket)
    assert [f.path for f in pack.files][:2] == ["pkg/layout.py", "pkg/__init__.py"]


def test_a_hit_in_a_module_docstring_weighs_as_documentation(tmp_path):
    files = {"pkg/__init__.py": REFERENCE_INIT, "pkg/layout.py": LAYOUT}
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    results = run_searches(["LayoutPass"], search, 1)
    read = {ev.path: ev for ev in rank_files(results, None, search.file_text)}
    blind = {ev.path: ev for ev in rank_files(results, None, None)}  # no texts: not applied
    docstring_line = 7  # ``   LayoutPass`` in the autosummary
    assert read["pkg/__init__.py"].lines[docstring_line] == pytest.approx(
        blind["pkg/__init__.py"].lines[docstring_line] * DOCS_FACTOR
    )
    assert docstring_line not in read["pkg/__init__.py"].strong
    assert read["pkg/layout.py"].lines == blind["pkg/layout.py"].lines  # code hits unchanged


# --- a package __init__ ranked first ---------------------------------------------------------


IMPORTER_RULES = [
    # (best file, its imports promoted)
    ("app/__init__.py", False),  # a package __init__ imports every module it re-exports
    ("app/cli.py", True),  # a module's imports are where its fix's second file often is
]


@pytest.mark.parametrize(("best", "promoted"), IMPORTER_RULES, ids=[r[0] for r in IMPORTER_RULES])
def test_a_package_init_ranked_first_promotes_none_of_its_imports(tmp_path, best, promoted):
    names = [f"mod{i}" for i in range(3)]
    imports = "".join(f"from app import {n}\n" for n in names)
    files = {"app/__init__.py": imports, "app/cli.py": imports + "\n\ndef main():\n    pass\n"}
    files.update({f"app/{n}.py": f"def run_{n}():\n    return 0\n" for n in names})
    files["app/xattr.py"] = "def write_xattr(path):\n    return path\n"
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    ranked = [FileEvidence(best, 5.0), FileEvidence("app/xattr.py", 1.0)]
    ranked += [FileEvidence(f"app/{n}.py", 0.9) for n in names]
    ordered = [ev.path for ev in promote_imported(ranked, search)]
    assert ordered[0] == best
    assert (ordered[1] != "app/xattr.py") is promoted


# --- a named callee first --------------------------------------------------------------------

MODELS = """from pkg.decoders import LineDecoder


class Response:
    def iter_lines(self):
        decoder = LineDecoder()
        for text in self.iter_text():
            yield from decoder.decode(text)

    def iter_text(self):
        return []
"""
DECODERS = """class LineDecoder:
    def decode(self, text):
        return text.split("\\n")
"""

CALLEE_RULES = [
    # (rule, models file, decoders file, seeds, first file)
    ("callee named and defined elsewhere", MODELS, DECODERS,
     ["Response.iter_lines", "iter_lines", "LineDecoder"], "pkg/decoders.py"),
    ("callee not named", MODELS, DECODERS, ["Response.iter_lines", "iter_lines"],
     "pkg/models.py"),
    ("an exception class is not the callee",
     MODELS.replace("LineDecoder", "DecodingError"),
     DECODERS.replace("LineDecoder", "DecodingError"),
     ["Response.iter_lines", "iter_lines", "DecodingError"], "pkg/models.py"),
    ("the caller's file also defines it", MODELS + "\n\n" + DECODERS, DECODERS,
     ["Response.iter_lines", "iter_lines", "LineDecoder"], "pkg/models.py"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "models", "decoders", "seeds", "first"), CALLEE_RULES, ids=[r[0] for r in CALLEE_RULES]
)
def test_a_named_callee_is_first_over_its_caller(tmp_path, rule, models, decoders, seeds, first):
    files = {"pkg/__init__.py": "", "pkg/models.py": models, "pkg/decoders.py": decoders}
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    lines = search.file_text("pkg/models.py") or []
    at = next(n for n, t in enumerate(lines, 1) if "def iter_lines" in t)
    caller = FileEvidence("pkg/models.py", 3.0, {at: 2.0}, strong={at})
    callee = FileEvidence("pkg/decoders.py", 1.0, {1: 2.0}, strong={1})
    ordered = named_callee_first([caller, callee], search, {s.split(".")[-1] for s in seeds})
    assert ordered[0].path == first
    assert {ev.path for ev in ordered} == {"pkg/models.py", "pkg/decoders.py"}


def test_the_pack_puts_the_named_callee_first(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/models.py": MODELS, "pkg/decoders.py": DECODERS}
    repo = make_repo(tmp_path / "repo", files)
    ticket = "`Response.iter_lines` splits lines wrongly; `iter_lines` uses `LineDecoder`"
    seeds = ["Response.iter_lines", "iter_lines", "LineDecoder"]
    pack = build_pack(seeds, LocalGitGrep(repo), ticket_text=ticket)
    assert [f.path for f in pack.files][:2] == ["pkg/decoders.py", "pkg/models.py"]


def test_seed_names_are_the_last_identifier_of_seeds_that_hit(tmp_path):
    from veranda_dagster.domain.context.code_search import Hit
    from veranda_dagster.domain.context.retrieval import SearchResult

    results = [
        SearchResult("client.get_user", 0, [Hit("a.py", 1, "x")], seed="client.get_user"),
        SearchResult("nothing_here", 1, [], seed="nothing_here"),
        SearchResult("word", 2, [Hit("a.py", 1, "x")]),  # a plain word, not a seed
    ]
    assert seed_names(results) == {"get_user"}
