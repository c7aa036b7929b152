"""``benchmarks/history_lift.py`` on a tiny history: commits read newest first and bounded by
depth, fix-worded ones told apart, and the fix's own earlier work (same author, days before)
left out while another author's commit of the same day counts."""

from __future__ import annotations

from pathlib import Path

from tests.benchmarks.scripts import git, load_script

OTHER = "Other <other@example.invalid>"


def _commit(repo: Path, path: str, subject: str, author: str | None = None) -> str:
    (repo / path).write_text(subject + "\n")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", subject, *(["--author", author] if author else []))
    return git(repo, "rev-parse", "HEAD")


def _history(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    _commit(repo, "a.py", "add a", OTHER)
    _commit(repo, "b.py", "Fix crash in b", OTHER)
    _commit(repo, "c.py", "docs for c", OTHER)
    base = _commit(repo, "d.py", "fix d, the fixer's own earlier work")  # the fixer: git()'s "t"
    fix = _commit(repo, "a.py", "the fix itself")
    return repo, base, fix


def test_commits_are_read_newest_first_and_bounded_by_depth(tmp_path: Path) -> None:
    bench = load_script("history_lift")
    repo, base, _fix = _history(tmp_path)
    commits = bench.recent_commits(repo, base, 10)
    assert [c.files for c in commits] == [["d.py"], ["c.py"], ["b.py"], ["a.py"]]
    assert [c.files for c in bench.recent_commits(repo, base, 2)] == [["d.py"], ["c.py"]]


def test_fix_worded_commits_and_the_fixers_own_work(tmp_path: Path) -> None:
    bench = load_script("history_lift")
    repo, base, fix = _history(tmp_path)
    commits = bench.recent_commits(repo, base, 10)
    fixer = bench.fix_commit(repo, fix)
    assert fixer.author == "t@example.invalid"
    # d.py is the fixer's own commit minutes before the fix: no ticket would have it
    assert bench.touched(commits, 10, False, fixer) == {"a.py", "b.py", "c.py"}
    assert bench.touched(commits, 10, True, fixer) == {"b.py"}
    # the twin: the same commit counts when someone else wrote the fix
    stranger = bench.Commit("someone@example.invalid", fixer.time, "")
    assert "d.py" in bench.touched(commits, 10, True, stranger)
    assert bench.touched(commits, 1, False, stranger) == {"d.py"}  # the depth bound
