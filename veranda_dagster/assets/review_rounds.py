"""``review_rounds``: a simplify pass, then fix-and-re-review bounded at five rounds."""

from veranda_dagster.assets._collaborators import work_on
from veranda_dagster.assets._metadata import review_md
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.models import PullRequest, ReviewRounds, WorkOrder
from veranda_dagster.domain.core.work_order import packed
from veranda_dagster.domain.deliver import review
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource


@phase_asset(
    PHASES["review_rounds"],
    ReviewRounds,
    "The agent reviews its own diff in a separate seat; at most MAX_REVIEW_ROUNDS.",
    outcome=lambda r: r.stopped,
    details=lambda r: {
        "review_rounds": len(r.rounds),
        "findings": sum(len(x.findings) for x in r.rounds),
        "head_sha": r.head_sha,
        "verdicts": review_md(r.rounds),
    },
)
def review_rounds(
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    order: WorkOrder,
    pull_request: PullRequest,
) -> ReviewRounds:
    with work_on(order, tickets, forge, agents, workspace) as w:
        return review.review_rounds(
            order.ticket,
            packed(order),
            pull_request,
            w.workspace,
            w.agent,
            w.forge,
            validation_timeout_s=workspace.validation_timeout_s,
        )
