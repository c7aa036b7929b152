"""``WorkspaceResource``: where ticket clones live and how long the repo's own commands and
the PR's CI may take.

Every phase that runs the repository's build/lint/test gets ``validation_timeout_s`` from here
and ``ci_outcome`` gets ``ci_wait_timeout_s``, so a setting goes env -> this resource -> the
domain call in one hop (``VERANDA_VALIDATION_TIMEOUT_S`` was dropped once on a longer path).
"""

from __future__ import annotations

import os
from pathlib import Path

from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.core.bounds import CI_WAIT_TIMEOUT_S, VALIDATION_TIMEOUT_S
from veranda_dagster.domain.core.ticket_key import ticket_dir
from veranda_dagster.resources._env import setting
from veranda_dagster.settings import env_number


def branch_for(ticket_id: str) -> str:
    """The ticket's work branch on the forge: ``veranda/<ticket-key-lowercased>``."""
    return f"veranda/{ticket_id.lower()}"


def default_workspace_root() -> str:
    home = os.environ.get("DAGSTER_HOME")
    return str(Path(home) / "workspaces") if home else str(Path(".veranda") / "workspaces")


class WorkspaceResource(Resource):
    """The per-ticket clones' root and the bounds on the commands run in them."""

    root: str = ""
    """Parent of the per-ticket clones; empty = ``$DAGSTER_HOME/workspaces``."""
    validation_timeout_s: float = VALIDATION_TIMEOUT_S
    """Bound on each repo command ``red_tests``/``patch``/review/feedback run."""
    ci_wait_timeout_s: float = CI_WAIT_TIMEOUT_S
    """How long ``ci_outcome`` waits for the PR head's checks."""

    @classmethod
    def from_env(cls) -> WorkspaceResource:
        return cls(
            root=setting("VERANDA_WORKSPACES"),
            validation_timeout_s=env_number(
                "VERANDA_VALIDATION_TIMEOUT_S", VALIDATION_TIMEOUT_S, float
            ),
            ci_wait_timeout_s=env_number("VERANDA_CI_WAIT_TIMEOUT_S", CI_WAIT_TIMEOUT_S, float),
        )

    @property
    def root_dir(self) -> str:
        return self.root or default_workspace_root()

    def clone(
        self,
        ticket_id: str,
        clone_url: str,
        branch: str = "",
        token: str | None = None,
        git_username: str = "",
    ) -> Workspace:
        """The ticket's clone of ``clone_url`` on ``branch`` (default ``veranda/<key>``)."""
        return Workspace(
            self.root_dir,
            ticket_id,
            clone_url,
            branch or branch_for(ticket_id),
            token or None,
            git_username=git_username,
        )

    def scratch_dir(self, ticket_id: str) -> str:
        path = ticket_dir(Path(self.root_dir) / "_scratch", ticket_id)  # hostile ids stay inside
        path.mkdir(parents=True, exist_ok=True)
        return str(path)
