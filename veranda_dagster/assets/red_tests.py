"""``red_tests``: failing tests derived from the ticket, committed before any implementation."""

from veranda_dagster.assets._collaborators import work_on
from veranda_dagster.assets._metadata import command_md
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.models import ContextPack, RedTests, WorkOrder
from veranda_dagster.domain.work import red_tests as build_red_tests
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource


@phase_asset(
    PHASES["red_tests"],
    RedTests,
    "A definition of done that predates the patch: tests that fail on the base commit for "
    "the right reason, committed and pushed on the ticket branch.",
    outcome=lambda r: "red" if not r.base_run.ok else "not_red",
    details=lambda r: {
        "commit_sha": r.commit_sha,
        "test_files": len(r.test_files),
        "attempts": r.attempts,
        **({"base_exit_code": r.base_run.exit_code} if r.base_run.exit_code is not None else {}),
        "base_run_s": round(r.base_run.duration_s, 3),
        "red_test_output": command_md(r.base_run),
        "rejected": len(r.rejected),
    },
)
def red_tests(
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    order: WorkOrder,
    context_pack: ContextPack,
) -> RedTests:
    """The pack is the predecessor; the ticket comes in the order it carries."""
    with work_on(order, tickets, forge, agents, workspace) as w:
        return build_red_tests.write_red_tests(
            order.ticket,
            context_pack,
            w.workspace,
            w.agent,
            validation_timeout_s=workspace.validation_timeout_s,
        )
