"""The candidate lister on a real git history built here: which fix commits qualify and why.

The dataset's selection rule lives in ``benchmarks/retrieval_candidates.py``; these tests pin
each clause of it (issue named in the message, non-test files that exist at the base, the file
and line bounds, the opt-in squash-merged fix PRs) so a change to the rule shows up here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.scripts import git, load_script

lister = load_script("retrieval_candidates")

REPO = "acme/demo"


def _commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")[:10]


def _lines(n: int, tag: str) -> str:
    return "".join(f"{tag}_{i} = {i}\n" for i in range(n))


@pytest.fixture()
def history(tmp_path: Path) -> dict[str, str]:
    """A small project whose commits each hit one clause of the rule; returns name -> short sha."""
    repo = tmp_path / "acme+demo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = {f"pkg/mod{i}.py": _lines(3, f"v{i}") for i in range(6)}
    base["tests/test_mod0.py"] = "def test_x():\n    pass\n"
    shas = {"base": _commit(repo, "initial", base)}
    shas["one_file"] = _commit(
        repo,
        "Fix crash on empty input\n\nFixes #12",
        {
            "pkg/mod0.py": _lines(4, "v0"),
            "tests/test_mod0.py": "def test_x():\n    assert True\n",
        },
    )
    shas["url_two_files"] = _commit(
        repo,
        f"Handle timeouts (closes https://github.com/{REPO}/issues/13)",
        {"pkg/mod1.py": _lines(4, "v1"), "pkg/mod2.py": _lines(4, "v2")},
    )
    shas["only_tests"] = _commit(
        repo, "Fixes #14", {"tests/test_mod0.py": "def test_y():\n    pass\n"}
    )
    shas["new_file_only"] = _commit(repo, "Resolves #15", {"pkg/brand_new.py": "x = 1\n"})
    shas["five_files"] = _commit(
        repo, "Fix #16: sweeping change", {f"pkg/mod{i}.py": _lines(5, f"w{i}") for i in range(5)}
    )
    shas["too_many_lines"] = _commit(repo, "fixes #17", {"pkg/mod5.py": _lines(200, "big")})
    shas["other_repo"] = _commit(repo, "Fixes other/proj#18", {"pkg/mod3.py": _lines(6, "v3")})
    shas["fix_pr"] = _commit(
        repo, "fix(core): drop stale cache (#19)", {"pkg/mod4.py": _lines(7, "v4")}
    )
    shas["no_issue"] = _commit(repo, "Refactor helpers", {"pkg/mod4.py": _lines(8, "v4")})
    return shas | {"git_dir": str(repo)}


def test_lists_only_commits_that_name_an_issue_and_touch_existing_code(history):
    rows = lister.candidates(Path(history["git_dir"]), REPO)

    assert [row["sha"] for row in rows] == [history["url_two_files"], history["one_file"]]
    url_row, one_row = rows
    assert one_row["issues"] == [12]
    assert one_row["gold"] == ["pkg/mod0.py"]
    assert url_row["issues"] == [13]
    assert url_row["gold"] == ["pkg/mod1.py", "pkg/mod2.py"]


def test_fix_prs_adds_squash_merged_fix_commits_with_their_pr_number(history):
    rows = lister.candidates(Path(history["git_dir"]), REPO, fix_prs=True)

    by_sha = {row["sha"]: row for row in rows}
    assert by_sha[history["fix_pr"]]["pr"] == 19
    assert by_sha[history["fix_pr"]]["issues"] == []
    assert history["no_issue"] not in by_sha
    assert "pr" not in by_sha[history["one_file"]]


def test_bounds_are_the_named_constants(history):
    rows = lister.candidates(Path(history["git_dir"]), REPO)

    assert all(1 <= len(row["gold"]) <= lister.MAX_GOLD for row in rows)
    assert all(row["changed"] <= lister.MAX_CHANGED_LINES for row in rows)
    assert lister.MAX_GOLD == 4
    assert lister.MAX_CHANGED_LINES == 150


def test_scan_bound_limits_how_far_back_the_lister_reads(history):
    newest_two = lister.candidates(Path(history["git_dir"]), REPO, scan=2, fix_prs=True)

    assert [row["sha"] for row in newest_two] == [history["fix_pr"]]


def test_cli_prints_one_json_row_per_candidate(history, capsys):
    repos_dir = str(Path(history["git_dir"]).parent)

    assert lister.main(["--repos-dir", repos_dir, "--repo", REPO]) == 0

    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 2
    assert '"issues": [13]' in printed[0]
