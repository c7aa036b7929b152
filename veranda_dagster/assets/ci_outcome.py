"""``ci_outcome``: the PR head's checks, with exactly one grounded repair attempt."""

from veranda_dagster.assets._collaborators import work_on
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.models import CIOutcome, ReviewRounds, WorkOrder
from veranda_dagster.domain.core.work_order import packed
from veranda_dagster.domain.deliver import ci
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource


@phase_asset(
    PHASES["ci_outcome"],
    CIOutcome,
    "Waits for the head's check runs; on red, one repair grounded in the static-analysis "
    "violations of this commit (or the log tail), then waits again.",
    outcome=lambda c: c.status,
    details=lambda c: {
        "ci_status": c.status,
        "head_sha": c.head_sha,
        "checks": len(c.checks),
        "repairs": c.repairs,
        # what the one repair was grounded on; no row when no repair was made
        "repair_grounding": c.repair_grounding if c.repair_grounding != "none" else None,
        "violations": len(c.violations),
        "polls": c.polls,
    },
)
def ci_outcome(
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    order: WorkOrder,
    review_rounds: ReviewRounds,
) -> CIOutcome:
    """The branch's head after review is all the CI wait needs of the PR (``review_rounds``
    carries it), so the PR is its upstream's upstream, not an edge of its own."""
    with work_on(order, tickets, forge, agents, workspace) as w:
        return ci.await_ci(
            order.ticket,
            packed(order),
            review_rounds,
            w.workspace,
            w.agent,
            w.forge,
            timeout_s=workspace.ci_wait_timeout_s,
        )
