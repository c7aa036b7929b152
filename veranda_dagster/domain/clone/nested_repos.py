"""Nested repositories and gitlinks a change must not bring in.

A repository inside the clone (made by the repository's tests or by the agent) is how a
hostile tree got its own ``.git/config`` filters run by the product's ``git status``: once
``git add --all`` records it as a gitlink, git checks the "submodule" by running git inside
it. With every work-tree git now sandboxed that no longer reaches a secret, but a gitlink is
still never a change the product means to make: it points at a commit the forge does not
have, and the nested files are silently not committed. So the product refuses, by name, any
nested repository or gitlink the base commit does not already have, before staging and again
before pushing.

The work tree is walked (no links followed, ignored folders skipped, at most
``MAX_WORKTREE_WALK_ENTRIES`` entries: past that the check fails closed) for any ``.git``
entry, a folder or a file, whether or not today's git would take it for a repository.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from veranda_dagster.domain.clone.git_command import GitError

MAX_WORKTREE_WALK_ENTRIES = 300_000
"""Entries of the work tree outside ignored folders (``node_modules`` and build output are
skipped); a tree past this is refused rather than half-checked."""

GITLINK_MODE = "160000"


class NestedRepositoryError(GitError):
    """The change holds a nested repository or a gitlink the base commit does not have; the
    message names its path."""


def nested_git_entries(repo: Path, ignored: Iterable[str] = ()) -> list[str]:
    """Folders under ``repo`` (relative, ``/``-separated) holding a ``.git`` entry of any kind,
    ``repo``'s own left out; ``ignored`` folders (``dir/``, as git lists them) are skipped."""
    skip = {p.rstrip("/") for p in ignored}
    found: list[str] = []
    seen = 0
    for top, dirs, files in os.walk(repo, followlinks=False):
        rel_top = os.path.relpath(top, repo).replace(os.sep, "/")
        rel_top = "" if rel_top == "." else rel_top
        if rel_top and ".git" in dirs + files:
            found.append(rel_top)
            dirs[:] = []  # git would not look inside it either
            continue
        if not rel_top and ".git" in dirs:
            dirs.remove(".git")
        kept = []
        for name in dirs:
            rel = f"{rel_top}/{name}" if rel_top else name
            if rel not in skip:
                kept.append(name)
        dirs[:] = kept
        seen += len(dirs) + len(files)
        if seen > MAX_WORKTREE_WALK_ENTRIES:
            raise NestedRepositoryError(
                f"the work tree holds more than {MAX_WORKTREE_WALK_ENTRIES} entries outside "
                "ignored folders; refusing to commit without checking it for nested repositories"
            )
    return sorted(found)


def gitlinks(listing: bytes) -> set[str]:
    """Paths of mode-160000 entries in ``git ls-tree -r -z`` or ``git ls-files -s -z`` output."""
    found: set[str] = set()
    for entry in listing.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        if meta.split(b" ", 1)[0] == GITLINK_MODE.encode() and path:
            found.add(path.decode("utf-8", errors="replace"))
    return found


def added_gitlinks(raw: bytes) -> list[str]:
    """Paths a ``git diff --raw -z --no-renames`` turns into gitlinks (new mode 160000 where
    the old one was not)."""
    found: list[str] = []
    fields = raw.split(b"\0")
    for meta, path in zip(fields[::2], fields[1::2], strict=False):
        modes = meta.lstrip(b":").split(b" ")
        if len(modes) >= 2 and modes[1] == GITLINK_MODE.encode() and modes[0] != modes[1]:
            found.append(path.decode("utf-8", errors="replace"))
    return found


def refuse_new(paths: Iterable[str], base_gitlinks: set[str], action: str, kind: str) -> None:
    """A ``NestedRepositoryError`` naming the first of ``paths`` the base does not have;
    ``action`` is what is refused (``commit on veranda/eng-1``), ``kind`` what the path is."""
    new = sorted(set(paths) - base_gitlinks)
    if new:
        more = f" (and {len(new) - 1} more)" if len(new) > 1 else ""
        raise NestedRepositoryError(
            f"refusing to {action}: {new[0]} is a {kind} the base commit does not have{more}; "
            "nested repositories and submodules are never committed"
        )
