"""Work-tree grep when the clone is the pinned commit, object-store grep otherwise: same pack."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.fixtures.context.gitrepo import commit, git, make_repo
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.pack import _pack
from veranda_dagster.domain.core.models import Ticket

ROOT = Path(__file__).resolve().parents[3]
TICKETS = [
    [
        "Pack searches sleep",
        "`build_pack` waits in `run_searches`; see domain/context/retrieval.py",
    ],
    ["CI wait", "wait_for_checks backs off from CI_POLL_INITIAL_S; GitHubClient.list_ci_jobs"],
    ["Sensor", "The pr_feedback sensor polls MAX_FEEDBACK_PRS_PER_TICK pull requests"],
    ["Workspace", "Workspace.ensure clones; `git_argv` adds SAFE_GIT_CONFIG to every call"],
]


@pytest.fixture(scope="module")
def own_clone(tmp_path_factory) -> Path:
    """A clone of this very repository: a real tree of a few hundred files."""
    dest = tmp_path_factory.mktemp("own") / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(dest)], check=True)
    return dest


@pytest.mark.parametrize("texts", TICKETS, ids=[t[0] for t in TICKETS])
def test_the_pack_from_the_work_tree_equals_the_pack_from_the_object_store(own_clone, texts):
    sha = git(own_clone, "rev-parse", "HEAD")
    worktree = LocalGitGrep(own_clone, sha)
    objects = LocalGitGrep(own_clone, sha, prefer_worktree=False)
    for search in (worktree, objects):
        search._corpus = False  # as for a tree past MAX_CORPUS_BYTES: git grep, not memory
    ticket = Ticket(id="ENG-19", source="linear", title=texts[0], description=texts[1])
    from_worktree, _ = _pack(texts, worktree, ticket)
    from_objects, _ = _pack(texts, objects, ticket)
    assert (worktree.source, objects.source) == ("worktree", "objects")
    assert from_worktree.files  # the tickets name real code: a non-empty pack to compare
    assert from_worktree == from_objects
    for seed in list(worktree.calls):
        assert worktree.search(seed) == objects.search(seed)


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "r", {"src/a.py": "def retry_after():\n    pass\n"})


def test_a_changed_tracked_file_sends_the_grep_to_the_object_store(repo):
    (repo / "src/a.py").write_text("retry_after planted in the work tree\n")
    search = LocalGitGrep(repo)
    assert search.source == "objects"
    assert [(h.path, h.line, h.text) for h in search.search("retry_after")] == [
        ("src/a.py", 1, "def retry_after():")
    ]


def test_a_work_tree_past_the_pinned_commit_is_not_searched(repo):
    base = git(repo, "rev-parse", "HEAD")
    commit(repo, {"src/b.py": "retry_after()\n"})
    search = LocalGitGrep(repo).at(base)
    assert search.source == "objects"
    assert {h.path for h in search.search("retry_after")} == {"src/a.py"}
    assert LocalGitGrep(repo).source == "worktree"  # HEAD itself is clean


def test_untracked_files_do_not_count_and_are_never_hits(repo):
    (repo / "notes.txt").write_text("retry_after\n")  # e.g. a layer file kept out of git
    search = LocalGitGrep(repo)
    assert search.source == "worktree"
    assert {h.path for h in search.search("retry_after")} == {"src/a.py"}


def test_converting_attributes_keep_the_object_store(tmp_path):
    repo = make_repo(
        tmp_path / "r", {".gitattributes": "*.py eol=crlf\n", "src/a.py": "retry_after\n"}
    )
    assert LocalGitGrep(repo).source == "objects"
