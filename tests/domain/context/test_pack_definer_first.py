"""Table tests for the fourth round of issue 35's file ranking: the module that defines what the
ticket names goes first over a package ``__init__`` that only re-exports it
(``definer_over_reexport``) and over a hub module that imports it (``definer_over_importer``).
Each rule has its adversarial twins: the cases where the best file keeps its place. The rules
run over a real git repository (``make_repo``) read by the real search index."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context.code_search import Hit, LocalGitGrep
from veranda_dagster.domain.context.pack_promotion import (
    definer_over_importer,
    definer_over_reexport,
)
from veranda_dagster.domain.context.pack_windows import FileEvidence
from veranda_dagster.domain.context.retrieval import (
    SearchResult,
    build_pack,
    strongest_seed_name,
)

# --- a package __init__ that only re-exports ---------------------------------------------------

REEXPORT = "from pkg.expression import ParameterExpression\nfrom pkg.other import helper\n"
EXPRESSION = "class ParameterExpression:\n    def sympify(self):\n        return self\n"
OTHER = "def helper():\n    return ParameterExpression\n"

REEXPORT_RULES = [
    # (rule, __init__ text, names, first file)
    ("the definer goes before the re-exporting __init__", REEXPORT,
     {"ParameterExpression", "sympify"}, "pkg/expression.py"),
    ("an __init__ that defines a named name keeps its place",
     REEXPORT + "\n\ndef sympify(expr):\n    return expr\n", {"ParameterExpression", "sympify"},
     "pkg/__init__.py"),
    ("no file defines a named name", REEXPORT, {"subs"}, "pkg/__init__.py"),
    ("no names at all", REEXPORT, set(), "pkg/__init__.py"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "init", "names", "first"), REEXPORT_RULES, ids=[r[0] for r in REEXPORT_RULES]
)
def test_the_definer_goes_before_a_reexporting_init(tmp_path, rule, init, names, first):
    files = {"pkg/__init__.py": init, "pkg/expression.py": EXPRESSION, "pkg/other.py": OTHER}
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    ranked = [
        FileEvidence("pkg/__init__.py", 3.0),
        FileEvidence("pkg/other.py", 2.5),  # ranked above the definer: names it, defines nothing
        FileEvidence("pkg/expression.py", 2.0),
    ]
    ordered = [ev.path for ev in definer_over_reexport(ranked, search, names)]
    assert ordered[0] == first
    assert sorted(ordered) == sorted(files)  # moved, never dropped


def test_only_a_package_init_gives_way_to_the_definer(tmp_path):
    """The twin: the same order with a plain module first is left alone by this rule."""
    files = {"pkg/__init__.py": "", "pkg/api.py": REEXPORT, "pkg/expression.py": EXPRESSION}
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    ranked = [FileEvidence("pkg/api.py", 3.0), FileEvidence("pkg/expression.py", 2.0)]
    ordered = definer_over_reexport(ranked, search, {"ParameterExpression"})
    assert [ev.path for ev in ordered] == ["pkg/api.py", "pkg/expression.py"]


def test_a_definer_beyond_the_pack_is_not_moved_first(tmp_path):
    files = {"pkg/__init__.py": REEXPORT, "pkg/expression.py": EXPRESSION, "pkg/other.py": OTHER}
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    ranked = [FileEvidence("pkg/__init__.py", 3.0), FileEvidence("pkg/other.py", 2.5)]
    ranked.append(FileEvidence("pkg/expression.py", 2.0))
    ordered = definer_over_reexport(ranked, search, {"ParameterExpression"}, max_files=2)
    assert ordered[0].path == "pkg/__init__.py"


CIRCUIT_INIT = (
    "from pkg.circuit.expression import ParameterExpression\n"
    "from pkg.circuit.vector import ParameterVector\n"
    "\n__all__ = ['ParameterExpression', 'ParameterVector']\n"
)
VECTOR = (
    "from pkg.circuit.expression import ParameterExpression\n\n\n"
    "class ParameterVector:\n    def params(self):\n        return [ParameterExpression()]\n"
)


def test_the_pack_puts_the_definer_before_the_package_named_by_a_dotted_seed(tmp_path):
    """Without the rule the ``__init__`` is first here: the dotted seed names its package."""
    files = {
        "pkg/__init__.py": "",
        "pkg/circuit/__init__.py": CIRCUIT_INIT,
        "pkg/circuit/expression.py": EXPRESSION,
        "pkg/circuit/vector.py": VECTOR,
    }
    repo = make_repo(tmp_path / "repo", files)
    ticket = "Calling `sympify` on a `ParameterVector` element from `pkg.circuit` fails"
    seeds = ["pkg.circuit", "ParameterVector", "sympify"]
    pack = build_pack(seeds, LocalGitGrep(repo), ticket_text=ticket)
    paths = [f.path for f in pack.files]
    assert paths[0] == "pkg/circuit/expression.py"
    assert "pkg/circuit/__init__.py" in paths  # kept, only lower


# --- a hub module that imports the definer ---------------------------------------------------

HUB = (
    "from pkg.web_response import Response\n"
    "from pkg.web_app import Application\n"
    "\n__all__ = ['Response', 'Application']\n"
)
RESPONSE = "class Response:\n    def __init__(self, body):\n        self.body = body\n"
APP = "class Application:\n    def __init__(self):\n        self.router = None\n"

IMPORTER_RULES = [
    # (rule, hub text, strongest, names, first file)
    ("the definer of the strongest name goes before the hub", HUB, "Response",
     {"Response", "Application"}, "pkg/web_response.py"),
    ("a weaker name's definer does not move", HUB, "run_app", {"run_app", "Application"},
     "pkg/web.py"),
    ("a hub that defines a named name keeps its place",
     HUB + "\n\ndef run_app(app):\n    return app\n", "Response", {"Response", "run_app"},
     "pkg/web.py"),
    ("a definer the hub does not import does not move",
     HUB.replace("from pkg.web_response import Response\n", ""), "Response",
     {"Response"}, "pkg/web.py"),
    ("no strongest name", HUB, None, {"Response"}, "pkg/web.py"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "hub", "strongest", "names", "first"),
    IMPORTER_RULES,
    ids=[r[0] for r in IMPORTER_RULES],
)
def test_the_definer_of_the_strongest_name_goes_before_its_importer(
    tmp_path, rule, hub, strongest, names, first
):
    files = {
        "pkg/__init__.py": "",
        "pkg/web.py": hub,
        "pkg/web_app.py": APP,
        "pkg/web_response.py": RESPONSE,
    }
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    ranked = [
        FileEvidence("pkg/web.py", 3.5),
        FileEvidence("pkg/web_app.py", 2.3),
        FileEvidence("pkg/web_response.py", 2.2),
    ]
    ordered = [ev.path for ev in definer_over_importer(ranked, search, strongest, names)]
    assert ordered[0] == first
    assert len(ordered) == 3


def test_the_pack_puts_the_definer_before_the_hub_named_by_a_dotted_seed(tmp_path):
    """Without the rule the hub is first here: the dotted seed names it and it uses the name."""
    hub = HUB + "\n\ndef run(app):\n    return Response(app)\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/web.py": hub,
        "pkg/web_app.py": APP,
        "pkg/web_response.py": RESPONSE,
    }
    repo = make_repo(tmp_path / "repo", files)
    ticket = "`web.Response` drops the body when `web.Application` serves it, on pkg 1.2"
    pack = build_pack(
        ["web.Response", "pkg.web", "web.Application"], LocalGitGrep(repo), ticket_text=ticket
    )
    paths = [f.path for f in pack.files]
    assert paths[:2] == ["pkg/web_response.py", "pkg/web.py"]


def test_a_package_init_is_never_the_importer_nor_the_definer_moved(tmp_path):
    """The twin: an ``__init__`` first is ``definer_over_reexport``'s case, and an ``__init__``
    defining the name is not where this rule sends the fix."""
    files = {"pkg/__init__.py": RESPONSE, "pkg/web.py": "from pkg import Response\n"}
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    ranked = [FileEvidence("pkg/web.py", 3.0), FileEvidence("pkg/__init__.py", 2.0)]
    ordered = definer_over_importer(ranked, search, "Response", {"Response"})
    assert [ev.path for ev in ordered] == ["pkg/web.py", "pkg/__init__.py"]
    init_first = list(reversed(ranked))
    assert definer_over_importer(init_first, search, "Response", {"Response"}) == init_first


STRONGEST = [
    # (results as (seed, rank, hit), strongest name)
    ([("web.Response", 0, True), ("Application", 1, True)], "Response"),
    ([("Application", 1, True), ("web.Response", 0, True)], "Response"),  # by rank, not order
    ([("nothing_here", 0, False), ("Application", 1, True)], "Application"),  # a miss skipped
    ([("nothing_here", 0, False)], None),
]


@pytest.mark.parametrize(("rows", "name"), STRONGEST, ids=[str(s[1]) for s in STRONGEST])
def test_the_strongest_seed_name_is_the_best_ranked_seed_that_hit(rows, name):
    results = [
        SearchResult(seed, rank, [Hit("a.py", 1, "x")] if hit else [], seed=seed)
        for seed, rank, hit in rows
    ]
    results.append(SearchResult("word", -1, [Hit("a.py", 1, "x")]))  # a plain word, no seed
    assert strongest_seed_name(results) == name
