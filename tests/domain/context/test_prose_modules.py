"""A module named by two adjacent prose words ("upstream proxy" -> ``_upstream_proxy.py``) is
a path hit when exactly one source file's stem is the two words joined (docs/retrieval.md,
twelfth round)."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.prose_modules import (
    MAX_NAMED_MODULES,
    MIN_WORD_CHARS,
    prose_named_modules,
)
from veranda_dagster.domain.context.retrieval import build_pack

TREE = [
    "pkg/layers/_upstream_proxy.py",
    "pkg/tools/contentview.py",
    "web/feed-export.js",
    "pkg/headers.py",
    "docs/reverse_mode.md",
    "pkg/a/filename.py",
    "pkg/b/file_name.py",
    "pkg/io_db.py",
]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("CONNECT fails when connecting to upstream proxies", ["pkg/layers/_upstream_proxy.py"]),
        ("The content view breaks.", ["pkg/tools/contentview.py"]),
        ("Our (feed export) drops rows", ["web/feed-export.js"]),
        ("the upstream proxy, then the content view", [
            "pkg/layers/_upstream_proxy.py", "pkg/tools/contentview.py",
        ]),
        # twins: the words are not a phrase, are code, name no source file, or name several
        ("upstream mode and a proxy", []),
        ("`upstream_proxy` is None", []),
        ("see pkg/upstream/proxy.py", []),
        ("in reverse mode", []),
        ("the file name is wrong", []),
        ("io db", []),
    ],
)  # fmt: skip
def test_two_prose_words_name_the_one_module_joining_them(text, named):
    assert prose_named_modules(text, TREE) == named


def test_the_bounds():
    assert MIN_WORD_CHARS == 3 and MAX_NAMED_MODULES == 2
    tree = ["a/alpha_beta.py", "a/gamma_delta.py", "a/eps_zeta.py"]
    text = "alpha beta, gamma delta, eps zeta"
    assert prose_named_modules(text, tree) == ["a/alpha_beta.py", "a/gamma_delta.py"]


def _tree(extra: dict[str, str]) -> dict[str, str]:
    return {
        "pkg/layers/_upstream_proxy.py": "def send(request):\n    return request\n",
        "pkg/headers.py": "def host_header(request):\n    return request.Host\n",
        **extra,
    }


@pytest.mark.parametrize(
    ("extra", "first"),
    [
        ({}, "pkg/layers/_upstream_proxy.py"),
        # twin: a second module with that stem, so the phrase names neither
        ({"pkg/legacy/upstream_proxy.py": "X = 1\n"}, "pkg/headers.py"),
    ],
)
def test_the_named_module_ranks_first(tmp_path, extra, first):
    search = LocalGitGrep(make_repo(tmp_path / "repo", _tree(extra)))
    ticket = "The Host header is missing when sending through an upstream proxy."
    pack = build_pack(["Host"], search, ticket_text=ticket)
    assert pack.files[0].path == first
