"""Issue 38: the pack's memory is bounded by ``MAX_HELD_TEXT_BYTES`` and the answers do not
change past it.

A tree whose texts are over the cap is not held: the full-text index is built from the texts
streamed one file at a time and searches run as ``git grep`` over the clone. On a real tree
(a clone of this repository, a few hundred files) the pack, every search and the full-text
ranking are the same as with the texts held; the git grep of the streamed path does not find
files the held path leaves out (over ``MAX_REPO_FILE_BYTES``, binary suffixes).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.fixtures.context.gitrepo import git, make_repo
from veranda_dagster.domain.clone import repo_corpus
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.pack import _pack
from veranda_dagster.domain.core.models import Ticket

ROOT = Path(__file__).resolve().parents[3]
TICKETS = [
    ["Pack searches sleep", "`build_pack` waits in `run_searches`; see retrieval.py"],
    ["CI wait", "wait_for_checks backs off from CI_POLL_INITIAL_S; GitHubClient.list_ci_jobs"],
    ["Workspace", "Workspace.ensure clones; `git_argv` adds SAFE_GIT_CONFIG to every call"],
]


@pytest.fixture(scope="module")
def own_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("own") / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(dest)], check=True)
    return dest


@pytest.mark.parametrize("texts", TICKETS, ids=[t[0] for t in TICKETS])
def test_a_tree_over_the_cap_is_streamed_and_gives_the_same_pack(
    own_clone: Path, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = git(own_clone, "rev-parse", "HEAD")
    ticket = Ticket(id="ENG-38", source="linear", title=texts[0], description=texts[1])
    held = LocalGitGrep(own_clone, sha)
    from_held, _ = _pack(texts, held, ticket)
    assert held.text_mode == "held"

    monkeypatch.setattr(repo_corpus, "MAX_HELD_TEXT_BYTES", 64 * 1024)  # the tree is ~MBs
    streamed = LocalGitGrep(own_clone, sha)
    from_streamed, _ = _pack(texts, streamed, ticket)
    assert streamed.text_mode == "streamed" and streamed.corpus() is None

    assert from_held.files and from_streamed == from_held
    assert streamed.full_text_rank(ticket.description) == held.full_text_rank(ticket.description)
    assert streamed.term_weights() == held.term_weights()
    for seed in list(held.calls):
        assert streamed.search(seed) == held.search(seed)


def test_the_streamed_grep_leaves_out_what_the_held_corpus_leaves_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "src/app.py": "def needle_here():\n    return 1\n",
            "src/huge.py": "needle_here = 1\n" + "x = 0\n" * 400,  # over the per-file bound
            "assets/logo.svg.png": "needle_here in a file with a binary suffix\n",
        },
    )
    monkeypatch.setattr(repo_corpus, "MAX_REPO_FILE_BYTES", 1_000)
    held = LocalGitGrep(repo)
    monkeypatch.setattr(repo_corpus, "MAX_HELD_TEXT_BYTES", 1)
    streamed = LocalGitGrep(repo)
    assert streamed.text_mode == "streamed"
    found = streamed.search("needle_here")
    assert [h.path for h in found] == ["src/app.py"]
    monkeypatch.setattr(repo_corpus, "MAX_HELD_TEXT_BYTES", 10**9)
    assert held.text_mode == "held" and held.search("needle_here") == found


def test_past_the_corpus_bound_nothing_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    repo = make_repo(tmp_path / "repo", {"src/app.py": "def f():\n    return 1\n"})
    monkeypatch.setattr(repo_corpus, "MAX_CORPUS_BYTES", 5)
    search = LocalGitGrep(repo)
    assert search.text_mode == "unread" and search.full_text_rank("f") is None
