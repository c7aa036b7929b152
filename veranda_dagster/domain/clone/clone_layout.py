"""Names under the workspaces root, shared by the modules that make, sandbox and sweep clones.

Kept apart (plain constants, no imports of the clone package) so the sandboxed-git seam
(``git_command``) can find a clone's borrowed store without importing recovery or transport.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

PARTIAL_CLONE_MARK: Final = ".partial-"
"""A clone is made in ``.<name>.partial-<pid>`` beside its place and renamed in when whole."""

OBJECTS_DIR: Final = "_objects"
"""The shared stores' folder under the workspaces root (not a ticket key: keys start with a
letter or digit, never ``_``)."""


def clone_name(repo_dir: str | Path) -> str:
    """The ticket folder's name, also for the half-made clone ``.<name>.partial-<pid>`` (its
    checkout runs sandboxed before the rename and borrows the same store)."""
    name = Path(os.path.abspath(repo_dir)).name
    if name.startswith(".") and PARTIAL_CLONE_MARK in name:
        return name[1:].split(PARTIAL_CLONE_MARK, 1)[0]
    return name
