"""The clone's texts read with one streamed ``git cat-file --batch``, on real repositories."""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.fixtures.context.gitrepo import git, make_repo
from veranda_dagster.domain.clone import repo_corpus
from veranda_dagster.domain.clone.repo_corpus import is_probably_text, load_texts
from veranda_dagster.domain.core.errors import InputError


def test_every_text_file_is_read_exactly_and_binaries_are_left_out(tmp_path):
    # far more output than a pipe holds: the blob list is written while the answers are read
    files = {f"pkg/m{i:03}.py": f"# module {i}\n" + "x = 'é'\n" * 200 for i in range(300)}
    files["logo.bin"] = "\0PNG" + "x" * 100
    files["skip.png"] = "not read at all"
    repo = make_repo(tmp_path / "repo", files)
    texts = load_texts(repo, git(repo, "rev-parse", "HEAD"), is_probably_text)
    assert texts is not None
    assert sorted(texts) == sorted(p for p in files if p.endswith(".py"))
    assert all(texts[p] == files[p] for p in texts)


def test_a_blob_the_clone_lacks_is_skipped_and_a_wrong_answer_is_an_error(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    blob = git(repo, "rev-parse", "HEAD:a.py")
    absent = "0" * 40
    with repo_corpus._BatchReader(repo, f"{absent}\n{blob}\n".encode()) as reader:
        assert reader.next_blob(absent) is None  # ``<sha> missing``: a partial clone
        assert reader.next_blob(blob) == b"a = 1\n"
    with (
        pytest.raises(InputError, match="out of order"),
        repo_corpus._BatchReader(repo, f"{blob}\n".encode()) as reader,
    ):
        reader.next_blob(absent)


def test_past_the_corpus_bound_nothing_is_read(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n" * 10, "b.py": "b = 2\n" * 10})
    monkeypatch.setattr(repo_corpus, "MAX_CORPUS_BYTES", 70)
    assert load_texts(repo, git(repo, "rev-parse", "HEAD"), is_probably_text) is None


@pytest.mark.parametrize("hangs", [True, False], ids=["git-hangs-killed", "git-answers-in-time"])
def test_a_cat_file_that_answers_nothing_is_killed_at_its_timeout(tmp_path, monkeypatch, hangs):
    """A git that never answers (a stalled disk, a held lock) is killed by the reader's timer
    at ``CAT_FILE_TIMEOUT_S`` and the read is a typed error naming the timeout; its twin, the
    same reader against a git that answers, reads the blob under the same short timeout."""
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    blob = git(repo, "rev-parse", "HEAD:a.py")
    monkeypatch.setattr(repo_corpus, "CAT_FILE_TIMEOUT_S", 0.5)
    if hangs:

        def silent_git(repo_dir, args, **popen):
            return subprocess.Popen(["sleep", "20"], **popen)

        monkeypatch.setattr(repo_corpus, "popen_git", silent_git)
    started = time.monotonic()
    if hangs:
        with (
            pytest.raises(InputError, match="timed out"),
            repo_corpus._BatchReader(repo, f"{blob}\n".encode()) as reader,
        ):
            reader.next_blob(blob)
    else:
        with repo_corpus._BatchReader(repo, f"{blob}\n".encode()) as reader:
            assert reader.next_blob(blob) == b"a = 1\n"
    assert time.monotonic() - started < 5
