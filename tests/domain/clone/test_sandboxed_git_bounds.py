"""The product's sandboxed git, stalled for real, gives up at each caller's named bound.

The stall: the clone's ``.git/config`` is a FIFO nobody writes, so every git started in the
clone blocks at startup reading its config (what a stuck disk or a planted special file does).
Each caller's bound is patched to half a second: ``is_whole_clone``
(``WHOLE_CLONE_CHECK_TIMEOUT_S``: the clone then counts as not whole), the code search's git
(``GREP_TIMEOUT_S``) and the instruction layers' git (``LAYER_GIT_TIMEOUT_S``), each a typed
``InputError`` naming the timeout. The twin: the same calls, same bound, on a clone whose
config is a file, answer at once.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.context.gitrepo import git, make_repo
from veranda_dagster.domain.clone import git_recovery
from veranda_dagster.domain.clone.git_recovery import is_whole_clone
from veranda_dagster.domain.context import code_search, layers
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.layers import exclude_from_git
from veranda_dagster.domain.core.errors import InputError

BOUND_S = 0.5
SLACK_S = 3.0
"""The sandbox's start and teardown on a loaded machine, beside the bound itself."""


def _whole(repo: Path) -> Any:
    return is_whole_clone(repo)


def _grep_sha(repo: Path) -> Any:
    return LocalGitGrep(repo).sha


def _exclude(repo: Path) -> Any:
    return exclude_from_git(repo, ["NOTES.md"])


CALLERS: list[tuple[str, Any, str, Callable[[Path], Any], Any]] = [
    # (id, module, constant, call, its answer on a healthy clone)
    ("whole clone check", git_recovery, "WHOLE_CLONE_CHECK_TIMEOUT_S", _whole, True),
    ("code search", code_search, "GREP_TIMEOUT_S", _grep_sha, None),
    ("instruction layers", layers, "LAYER_GIT_TIMEOUT_S", _exclude, ["NOTES.md"]),
]


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "clone", {"app.py": "x = 1\n"})
    git(repo, "remote", "add", "origin", "https://forge.example/acme/app.git")
    return repo


def _stall(repo: Path) -> None:
    config = repo / ".git" / "config"
    config.unlink()
    os.mkfifo(config)


@pytest.mark.parametrize(
    ("module", "name", "call"), [c[1:4] for c in CALLERS], ids=[c[0] for c in CALLERS]
)
def test_a_stalled_sandboxed_git_gives_up_at_its_callers_bound(
    clone: Path, monkeypatch: pytest.MonkeyPatch, module: Any, name: str, call: Any
) -> None:
    monkeypatch.setattr(module, name, BOUND_S)
    _stall(clone)
    started = time.monotonic()
    if name == "WHOLE_CLONE_CHECK_TIMEOUT_S":
        assert call(clone) is False  # not whole: made again, never waited on
    else:
        with pytest.raises(InputError, match=rf"timed out after {BOUND_S:g}s"):
            call(clone)
    assert time.monotonic() - started < BOUND_S + SLACK_S


@pytest.mark.parametrize(
    ("module", "name", "call", "healthy"), [c[1:] for c in CALLERS], ids=[c[0] for c in CALLERS]
)
def test_a_healthy_clone_answers_within_the_same_bound(
    clone: Path, monkeypatch: pytest.MonkeyPatch, module: Any, name: str, call: Any, healthy: Any
) -> None:
    monkeypatch.setattr(module, name, BOUND_S)
    answer = call(clone)
    if name == "GREP_TIMEOUT_S":
        healthy = git(clone, "rev-parse", "HEAD")
    assert answer == healthy
