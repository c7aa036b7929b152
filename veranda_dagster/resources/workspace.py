"""``WorkspaceResource``: where ticket clones live and how long the repo's own commands and
the PR's CI may take.

Every phase that runs the repository's build/lint/test gets ``validation_timeout_s`` from here
and ``ci_outcome`` gets ``ci_wait_timeout_s``, so a setting goes env -> this resource -> the
domain call in one hop (``VERANDA_VALIDATION_TIMEOUT_S`` was dropped once on a longer path).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.clone.clone_layout import OBJECTS_DIR
from veranda_dagster.domain.clone.object_cache import ObjectCache
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.clone.workspace_eviction import SweepPlan, plan_sweep, remove_workspace
from veranda_dagster.domain.clone.workspace_use import inventory
from veranda_dagster.domain.core.bounds import (
    CI_WAIT_TIMEOUT_S,
    MAX_WORKSPACE_BYTES,
    VALIDATION_TIMEOUT_S,
    WORKSPACE_MAX_AGE_S,
)
from veranda_dagster.domain.core.ticket_key import ticket_dir
from veranda_dagster.settings import default_workspace_root, env_number, setting


def branch_for(ticket_id: str) -> str:
    """The ticket's work branch on the forge: ``veranda/<ticket-key-lowercased>``."""
    return f"veranda/{ticket_id.lower()}"


class WorkspaceResource(Resource):
    """The per-ticket clones' root and the bounds on the commands run in them."""

    root: str = ""
    """Parent of the per-ticket clones; empty = ``$DAGSTER_HOME/workspaces``."""
    validation_timeout_s: float = VALIDATION_TIMEOUT_S
    """Bound on each repo command ``red_tests``/``patch``/review/feedback run."""
    ci_wait_timeout_s: float = CI_WAIT_TIMEOUT_S
    """How long ``ci_outcome`` waits for the PR head's checks."""
    share_objects: bool = True
    """Copy each new clone from the repository's shared store (``object_cache``), fetched
    fresh, instead of cloning the whole history from the forge per ticket."""
    max_total_bytes: int = MAX_WORKSPACE_BYTES
    """Bound on the whole folder (clones and stores) the sweep keeps (oldest finished first)."""
    max_age_s: float = WORKSPACE_MAX_AGE_S
    """A finished ticket's clone unused this long is removed by the sweep."""

    @classmethod
    def from_env(cls) -> WorkspaceResource:
        return cls(
            root=setting("VERANDA_WORKSPACES"),
            validation_timeout_s=env_number(
                "VERANDA_VALIDATION_TIMEOUT_S", VALIDATION_TIMEOUT_S, float
            ),
            ci_wait_timeout_s=env_number("VERANDA_CI_WAIT_TIMEOUT_S", CI_WAIT_TIMEOUT_S, float),
            max_total_bytes=env_number("VERANDA_WORKSPACES_MAX_BYTES", MAX_WORKSPACE_BYTES, int),
            max_age_s=env_number("VERANDA_WORKSPACES_MAX_AGE_S", WORKSPACE_MAX_AGE_S, float),
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
            objects=self.objects() if self.share_objects else None,
        )

    def objects(self) -> ObjectCache:
        """The per-repository shared stores, ``<root>/_objects``."""
        return ObjectCache(Path(self.root_dir) / OBJECTS_DIR)

    def sweep(
        self, now: float, in_progress: Collection[str] = (), closed: Collection[str] = ()
    ) -> SweepPlan:
        """Measure the workspaces and remove what ``plan_sweep`` picks: never the clone of a
        ticket in ``in_progress`` (its run is in flight) or used within the grace period."""
        found = inventory(self.root_dir)
        plan = plan_sweep(
            found,
            max_bytes=self.max_total_bytes,
            max_age_s=self.max_age_s,
            now=now,
            in_progress=in_progress,
            closed=closed,
        )
        for eviction in plan.evict:
            remove_workspace(self.root_dir, eviction.ticket_id)
        objects = self.objects()
        for store in list(plan.evict_stores):  # decided again under the store's lock
            if not objects.remove_unborrowed(objects.root / store.name):
                plan.evict_stores.remove(store)
                plan.total_bytes += store.bytes
                plan.over_bound = plan.total_bytes > self.max_total_bytes
        return plan

    def scratch_dir(self, ticket_id: str) -> str:
        path = ticket_dir(Path(self.root_dir) / "_scratch", ticket_id)  # hostile ids stay inside
        path.mkdir(parents=True, exist_ok=True)
        return str(path)
