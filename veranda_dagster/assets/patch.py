"""``patch``: the implementation that turns the red tests green, validated by the repo's own
build, lint and test commands, plus a separate test-writer seat's extra tests."""

from typing import Any

from veranda_dagster.assets._collaborators import work_on
from veranda_dagster.assets._metadata import bounded_md
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.models import Patch, RedTests, WorkOrder
from veranda_dagster.domain.core.work_order import packed
from veranda_dagster.domain.work import patch as build_patch
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource


def coverage(p: Patch) -> dict[str, float]:
    """Line coverage in percent, before and after; absent (not -1) when not measured."""
    out = {}
    if p.coverage_before is not None:
        out["coverage_before_pct"] = float(p.coverage_before)
    if p.coverage_after is not None:
        out["coverage_after_pct"] = float(p.coverage_after)
    return out


def details(p: Patch) -> dict[str, Any]:
    return {
        "commit_sha": p.commit_sha,
        "files_changed": len(p.files_changed),
        "attempts": p.attempts,
        "validation_commands": len(p.validation),
        "extra_test_files": len(p.extra_test_files),
        **coverage(p),
        "validation": bounded_md(
            "\n".join(
                f"- `{c.command}`: {'ok' if c.ok else 'failed'} ({c.duration_s:.1f} s)"
                for c in p.validation
            )
        ),
    }


@phase_asset(
    PHASES["patch"],
    Patch,
    "Implementer turns the red tests green with build/lint/test passing; then a separate "
    "test-writer seat adds tests. Committed and pushed on the ticket branch.",
    outcome=lambda p: "green" if all(c.ok for c in p.validation) else "validation_failed",
    details=details,
)
def patch(
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    order: WorkOrder,
    red_tests: RedTests,
) -> Patch:
    with work_on(order, tickets, forge, agents, workspace) as w:
        return build_patch.implement(
            order.ticket,
            packed(order),
            red_tests,
            w.workspace,
            w.agent,
            validation_timeout_s=workspace.validation_timeout_s,
        )
