"""``changed_lines`` on the verified ``git diff -U0`` shapes, and on a real repository's diff."""

from pathlib import Path

from tests.fixtures.context.gitrepo import commit, git, make_repo
from veranda_dagster.domain.clone.diff_hunks import changed_lines

DIFF = (Path(__file__).parents[2] / "fixtures" / "static_analysis" / "diff_u0.txt").read_text()


def test_recorded_shapes():
    # @@ -2 +2 @@ (count omitted = 1), @@ -4,0 +5,2 @@ (insertion), @@ -9,2 +10,0 @@ (deletion
    # only: nothing added), a new file, and a deleted file that does not appear at all
    assert changed_lines(DIFF) == {"f.py": {2, 5, 6}, "g.py": {1}}


def test_a_real_three_dot_diff_excludes_the_bases_later_commits(tmp_path):
    repo = make_repo(tmp_path / "r", {"a.py": "".join(f"{i}\n" for i in range(1, 11))})
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, {"a.py": "1\n2\nTWO-AND-A-HALF\n3\n4\n5\n6\n7\n8\n9\n10\n", "b.py": "x\ny\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, {"c.py": "someone else's\n"})
    diff = git(repo, "diff", "-U0", "--no-color", "main...work")
    assert changed_lines(diff) == {"a.py": {3}, "b.py": {1, 2}}
