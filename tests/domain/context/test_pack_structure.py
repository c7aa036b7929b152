"""The tree's structure in the pack's ranking, on real git repositories built here: the files the
best file imports move up, files in another language than the tree's and generated files move
down. Each through ``build_pack`` over ``LocalGitGrep`` (the seam ``veranda pack`` uses), with
the constant set to 1.0 as the contrast, so the test fails if the signal does nothing."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context import pack_promotion, path_kinds
from veranda_dagster.domain.context.code_search import Hit, LocalGitGrep
from veranda_dagster.domain.context.import_graph import (
    MAX_IMPORT_SCAN_LINES,
    PathIndex,
    defines,
    imported_paths,
    package_calls,
)
from veranda_dagster.domain.context.pack_signals import TicketEvidence
from veranda_dagster.domain.context.path_kinds import language_factor, path_factor
from veranda_dagster.domain.context.retrieval import SearchResult, build_pack, rank_files
from veranda_dagster.domain.context.seeds import seed_candidates
from veranda_dagster.domain.context.source_language import dominant_language, language_of


def _imports(path: str, text: str, tree: list[str]) -> list[str]:
    return imported_paths(path, text.splitlines(keepends=True), PathIndex(tree))


def test_python_imports_resolve_relative_absolute_and_submodule_forms():
    tree = [
        "src/pkg/__init__.py",
        "src/pkg/parser.py",
        "src/pkg/errors.py",
        "src/pkg/util/__init__.py",
        "src/pkg/util/text.py",
        "src/pkg/cli/main.py",
        "src/other.py",
    ]
    text = (
        "import os, pkg.errors\n"
        "from .util import text\n"
        "from . import parser\n"
        "from ..other import thing\n"
        "from pkg.util import (\n    missing_name,\n)\n"
        "from requests import get\n"
        "from .cli.main import run\n"
    )
    assert _imports("src/pkg/api.py", text, tree) == [
        "src/pkg/errors.py",  # absolute, matched by suffix under src/
        "src/pkg/util/text.py",  # a member that is a submodule wins over the package
        "src/pkg/parser.py",
        "src/other.py",  # two dots: one package up
        "src/pkg/util/__init__.py",  # a member that is a name: the package itself
        "src/pkg/cli/main.py",
    ]  # os and requests are not the tree's: nothing


def test_script_imports_resolve_relative_specifiers_and_skip_packages():
    tree = ["web/src/api.ts", "web/src/lib/index.ts", "web/src/view.tsx", "web/util.js"]
    text = (
        "import React from 'react'\n"
        "import { call } from './api'\n"
        "export { x } from './lib'\n"
        "const u = require('../util')\n"
        "import './view'\n"
    )
    assert _imports("web/src/app.ts", text, tree) == [
        "web/src/api.ts",
        "web/src/lib/index.ts",
        "web/util.js",
        "web/src/view.tsx",
    ]


def test_imports_past_the_scan_bound_and_self_imports_are_not_read():
    tree = ["pkg/a.py", "pkg/b.py", "pkg/c.py"]
    text = "from . import a\n" + "x = 1\n" * (MAX_IMPORT_SCAN_LINES - 2) + "from . import b\n"
    text += "from . import c\n"  # line MAX + 1
    assert _imports("pkg/a.py", text, tree) == ["pkg/b.py"]
    assert _imports("pkg/README.md", "from . import b\n", tree) == []


def _filler(name: str, n: int) -> str:
    return "".join(f"def {name}_{i}(value):\n    return value + {i}\n\n\n" for i in range(n))


TICKET = "The header parser crashes: a malformed header makes parse_header raise."


def _parser_repo(tmp_path, imported: str):
    """``parser.py`` matches the ticket most and imports ``imported``; seven other files, the
    imported one among them, each hold the ticket's word ``header`` once (the imported one is
    the longest, so plain BM25 ranks it last)."""
    files = {
        "pkg/parser.py": f"from pkg.{imported.removesuffix('.py').replace('/', '.')} import Bad\n"
        "\n\ndef parse_header(header):\n    # parse one header line, raise on a malformed header\n"
        "    raise Bad(header)\n",
        f"pkg/{imported}": _filler("z", 2) + "class Bad(Exception):\n    pass\n\n\nheader = None\n",
    }
    files |= {f"pkg/a{i}.py": _filler(f"a{i}", 2) + "header = None\n" for i in range(6)}
    return make_repo(tmp_path / "repo", files)


def _paths(repo, text: str = TICKET) -> list[str]:
    search = LocalGitGrep(repo)
    return [f.path for f in build_pack(seed_candidates([text]), search, ticket_text=text).files]


def test_a_module_the_best_file_imports_joins_the_pack_ahead_of_equal_evidence(
    tmp_path, monkeypatch
):
    repo = _parser_repo(tmp_path, "zerrors.py")
    paths = _paths(repo)
    assert paths[0] == "pkg/parser.py"  # the best file stays first
    assert paths[1] == "pkg/zerrors.py"  # last by name among equals, promoted by the import
    monkeypatch.setattr(pack_promotion, "IMPORT_PROMOTION", 1.0)
    assert "pkg/zerrors.py" not in _paths(repo)  # without it, six equals fill the pack first


def test_a_package_init_and_a_file_with_no_evidence_are_not_promoted(tmp_path):
    repo = _parser_repo(tmp_path, "zpkg/__init__.py")
    assert "pkg/zpkg/__init__.py" not in _paths(repo)  # re-exports: the fix is behind it
    files = {
        "pkg/parser.py": "from pkg.silent import Bad\n\n\ndef parse_header(header):\n"
        "    raise Bad(header)\n",
        "pkg/silent.py": "class Bad(Exception):\n    pass\n",
    }
    repo = make_repo(tmp_path / "repo2", files)
    assert _paths(repo) == ["pkg/parser.py"]  # imported, but nothing in the ticket points there


def test_calls_through_a_package_alias_name_the_functions_called():
    tree = ["netx/__init__.py", "netx/utils/__init__.py", "netx/utils/misc.py", "netx/core.py"]
    text = (
        "import netx as nx\n"
        "from netx import utils\n"
        "import netx.core as core\n"
        "import os\n"
        "def is_graphical(seq):\n"
        '    """\n    >>> nx.path_graph(4)\n    """\n'
        "    # nx.commented_out(seq)\n"
        "    if not nx.utils.is_list_of_ints(seq) or utils.flatten(seq):\n"
        "        return core.degree(seq) + os.path.join('a')\n"
    )
    lines = text.splitlines(keepends=True)
    # ``core`` is a module (``imported_paths`` resolves it); ``os`` is not the tree's
    assert package_calls("netx/graphical.py", lines, PathIndex(tree)) == {
        "is_list_of_ints",
        "flatten",
    }
    assert defines(["def is_list_of_ints(x):\n"], {"is_list_of_ints"})
    assert not defines(["    def is_list_of_ints(self):\n"], {"is_list_of_ints"})  # a method


def test_a_module_the_best_file_calls_through_its_package_joins_the_pack(tmp_path, monkeypatch):
    """networkx style: ``import netx as nx`` and ``nx.utils.check_int_list(...)``, the package
    re-exporting the function from ``netx/utils/zmisc.py``, which no import line names."""
    files = {
        "netx/__init__.py": "from netx.utils import *\nfrom netx.graphical import *\n",
        "netx/utils/__init__.py": "from netx.utils.zmisc import *\n",
        "netx/graphical.py": "import netx as nx\n\n\ndef is_graphical(sequence):\n"
        "    # a degree sequence of floats must be rejected\n"
        "    if not nx.utils.check_int_list(sequence):\n        raise ValueError(sequence)\n",
        "netx/utils/zmisc.py": _filler("z", 2)
        + "def check_int_list(values):\n    return all(isinstance(v, int) for v in values)\n"
        + "\n\nsequence = None\n",
    }
    files |= {f"netx/a{i}.py": _filler(f"a{i}", 2) + "sequence = None\n" for i in range(6)}
    repo = make_repo(tmp_path / "repo", files)
    ticket = "is_graphical accepts a float degree sequence: is_graphical should raise."
    paths = _paths(repo, ticket)
    assert paths[0] == "netx/graphical.py"
    assert "netx/utils/zmisc.py" in paths  # last by name among equals, promoted by the call
    monkeypatch.setattr(pack_promotion, "ALIAS_CALL_PROMOTION", 1.0)
    assert "netx/utils/zmisc.py" not in _paths(repo, ticket)


def _weak_evidence_repo(tmp_path, defined: bool = False):
    """Six files each use one identifier the ticket names (a keyword-strength hit, no
    definition); ``m0`` and ``zthrottle`` read like the ticket's prose, so the full-text
    ranking puts them first and second, but ``zthrottle`` has no identifier hit."""
    names = ["upload_part", "read_timeout", "pool_size", "chunk_size", "backoff_factor"]
    names.append("retry_total")
    files = {
        f"app/m{i}.py": _filler(f"m{i}", 6) + f"    settings.apply({name})  # upload\n"
        for i, name in enumerate(names, 1)
    }
    if defined:
        files["app/m1.py"] += "upload_part = 3\n"
    files["app/m0.py"] = "# uploads stall on a slow network, the transfer never finishes\n" * 3
    files["app/zthrottle.py"] = "# a slow transfer stalls, never finishes\n" * 2 + _filler("t", 1)
    return make_repo(tmp_path / ("defined" if defined else "weak"), files)


WEAK_TICKET = (
    "Uploads stall on a slow network: upload_part, read_timeout, pool_size, chunk_size, "
    "backoff_factor and retry_total are set, yet the transfer never finishes."
)


def test_with_only_weak_evidence_the_full_text_ranking_keeps_half_the_pack(tmp_path, monkeypatch):
    repo = _weak_evidence_repo(tmp_path)
    assert "app/zthrottle.py" in _paths(repo, WEAK_TICKET)  # full-text second, no seed hit
    monkeypatch.setattr(pack_promotion, "FULL_TEXT_SHARE_WHEN_WEAK", 0)
    assert "app/zthrottle.py" not in _paths(repo, WEAK_TICKET)  # six keyword hits crowd it out


def test_strong_evidence_is_trusted_over_the_full_text_share(tmp_path):
    repo = _weak_evidence_repo(tmp_path, defined=True)  # ``upload_part = 3``: a definition
    assert "app/zthrottle.py" not in _paths(repo, WEAK_TICKET)


def test_a_file_in_another_language_than_the_tree_ranks_below_the_same_evidence(monkeypatch):
    hits = [Hit("ext/upload.rs", 3, "retry_budget(count)"), Hit("src/upload.py", 3, "x")]
    results = [SearchResult("retry_budget", 0, hits)]
    evidence = TicketEvidence(main_language="py")
    ranked = [e.path for e in rank_files(results, evidence)]
    assert ranked == ["src/upload.py", "ext/upload.rs"]
    assert [e.path for e in rank_files(results, TicketEvidence())] == ranked[::-1]  # by name
    monkeypatch.setattr(path_kinds, "OTHER_LANGUAGE_FACTOR", 1.0)
    assert [e.path for e in rank_files(results, evidence)] == ranked[::-1]


def test_the_full_text_index_holds_the_tree_language_only(tmp_path):
    body = "retry budget for flaky uploads, retry the upload budget\n"
    files = {"ext/upload.rs": f"// {body}", "core/upload_notes.py": f"# {body}"}
    files |= {f"core/m{i}.py": _filler(f"m{i}", 3) for i in range(4)}
    ranked = LocalGitGrep(make_repo(tmp_path / "repo", files)).full_text_rank(body)
    assert ranked is not None and [p for p, _ in ranked] == ["core/upload_notes.py"]


def test_the_tree_language_and_the_factor_it_gives():
    tree = ["a.py", "b.py", "d.py", "c.rs", "lib.h", "lib.c", "README.md", "Makefile"]
    assert dominant_language(tree) == "py"
    assert language_of("x/y.tsx") == "ts" and language_of("lib.h") == "c"
    assert language_of("README.md") is None and language_of("Makefile") is None
    assert dominant_language(["README.md"]) is None
    assert language_factor("c.rs", "py") == path_kinds.OTHER_LANGUAGE_FACTOR < 1.0
    assert language_factor("a.py", "py") == language_factor("docs/x.md", "py") == 1.0
    assert language_factor("c.rs", None) == 1.0  # no listing (a hosted index): no judgement


@pytest.mark.parametrize(
    "path",
    [
        "src/app/migrations/0003_add_index.py",
        "server/database/_migrations/versions/2026_01_01_add.py",
        "proto/service_pb2.py",
        "ui/src/button.stories.tsx",
        "ui/src/__snapshots__/button.test.tsx.snap",
    ],
)
def test_generated_files_are_discounted(path):
    assert path_factor(path) == path_kinds.GENERATED_FACTOR < path_kinds.TEST_FACTOR


def test_a_generated_migration_does_not_outrank_the_model_it_was_made_from(tmp_path):
    model = "class Subscription:\n    renewal_date = None\n    grace_period = None\n"
    migration = (
        "def upgrade():\n" + "    add_column('subscription', 'renewal_date', 'grace_period')\n" * 8
    )
    files = {
        "billing/models.py": model,
        "billing/migrations/0007_renewal.py": migration,
        "billing/views.py": _filler("view", 3),
    }
    repo = make_repo(tmp_path / "repo", files)
    paths = _paths(repo, "Subscription renewal_date ignores the grace_period")
    assert paths[0] == "billing/models.py"
    assert paths.index("billing/migrations/0007_renewal.py") > 0
