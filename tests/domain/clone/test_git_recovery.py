"""A killed git never wedges a clone: the next phase finds and clears what it left.

The fault is real: ``git commit -a`` is started in the ticket's clone (its editor holds it open
with ``.git/index.lock`` taken), SIGKILLed with its process group, and the next ``ensure`` (the
start of every git phase) must resume and commit. While the git is alive its lock stays.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.fixtures.context.gitrepo import git, make_repo
from veranda_dagster.domain.clone.git_recovery import (
    clear_partial_clones,
    clear_stale_locks,
    live_git_pids,
)
from veranda_dagster.domain.clone.workspace import Workspace

BRANCH = "veranda/eng-5"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    src = make_repo(tmp_path / "src", {"app.py": "x = 1\n"})
    bare = tmp_path / "forge.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    return Workspace(tmp_path / "work", "ENG-5", str(bare), BRANCH)


def _hang_in_git_commit(repo: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    editor = tmp_path / "slow-editor.sh"
    editor.write_text("#!/bin/sh\nsleep 60\n")
    editor.chmod(0o755)
    (repo / "app.py").write_text("x = 2\n")
    proc = subprocess.Popen(
        ["git", "commit", "-a"],
        cwd=repo,
        env={**os.environ, "GIT_EDITOR": str(editor)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while not (repo / ".git" / "index.lock").exists():
        assert time.monotonic() < deadline, "git commit never took index.lock"
        time.sleep(0.05)
    return proc


def test_a_git_killed_mid_commit_is_recovered_at_the_next_phase(workspace, tmp_path):
    repo = workspace.ensure()
    proc = _hang_in_git_commit(repo, tmp_path)
    lock = repo / ".git" / "index.lock"
    try:
        assert proc.pid in live_git_pids(repo)
        assert clear_stale_locks(repo) == [] and lock.exists(), "a live git's lock was removed"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert lock.exists()  # what SIGKILL leaves: every git command would now refuse
    with pytest.raises(subprocess.CalledProcessError):
        subprocess.run(["git", "add", "app.py"], cwd=repo, check=True, capture_output=True)

    workspace.ensure()  # the next phase starts here
    assert "removed stale index.lock" in workspace.recovered and not lock.exists()
    (repo / "app.py").write_text("x = 3\n")
    head = workspace.commit_all("resume after the kill")
    workspace.push()
    assert git(Path(workspace.clone_url), "rev-parse", BRANCH) == head


def test_a_half_cloned_directory_is_cloned_again(workspace):
    workspace.path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(workspace.path)], check=True)  # no commit, no origin
    (workspace.path / "leftover.txt").write_text("half a checkout\n")
    repo = workspace.ensure()
    assert any("half-cloned" in note for note in workspace.recovered)
    assert (repo / "app.py").read_text() == "x = 1\n" and not (repo / "leftover.txt").exists()
    assert workspace.current_branch() == BRANCH


def test_a_dead_clones_partial_folder_is_removed_and_a_live_ones_kept(workspace):
    root = workspace.root
    root.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = root / f".{workspace.path.name}.partial-{dead.pid}"
    alive = root / f".{workspace.path.name}.partial-1"  # pid 1 is always alive
    for folder in (gone, alive):
        (folder / ".git").mkdir(parents=True)
    assert clear_partial_clones(workspace.path) == [gone]
    assert alive.exists() and not gone.exists()


def test_the_clone_appears_only_when_whole(workspace, monkeypatch):
    """A clone is made beside its place and renamed in: a failed clone leaves no folder that
    passes for the ticket's clone."""
    workspace.clone_url = str(Path(workspace.clone_url).with_name("missing.git"))
    with pytest.raises(Exception, match="clone"):
        workspace.ensure()
    assert not workspace.path.exists()
