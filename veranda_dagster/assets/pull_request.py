"""``pull_request``: the PR on the forge, with cited lines resolved or flagged."""

import dagster as dg

from veranda_dagster.assets._collaborators import work_on
from veranda_dagster.assets._metadata import bounded_md
from veranda_dagster.assets._policy import PHASES, dagster_asset
from veranda_dagster.assets._shell import declare_call, run_phase, work_order
from veranda_dagster.domain.core.models import Patch, PullRequest, WorkOrder
from veranda_dagster.domain.core.work_order import packed
from veranda_dagster.domain.deliver import pull_request as deliver_pull_request
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.domain_calls import DomainCalls
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.storage import ValueStore

SPEC = PHASES["pull_request"]


def open_pull_request(
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    order: WorkOrder,
    patch: Patch,
) -> PullRequest:
    """The earlier phases' calls (carried by the patch) join the PR's what-ran table, so a
    fallback in the repo confirmation or the red phase is reported too."""
    with work_on(order, tickets, forge, agents, workspace) as w:
        return deliver_pull_request.open_pull_request(
            order.ticket,
            packed(order),
            patch,
            w.workspace,
            w.forge,
            w.post,
        )


declare_call(SPEC.name, open_pull_request)


# Declared by hand around ``run_phase`` (not ``_shell.phase_asset``): its metadata links the
# ticket, from the work order the patch carries, beside the pull request's own.
@dagster_asset(
    SPEC,
    "Opens (or adopts, by branch) the pull request; citations in the body are resolved "
    "against the default branch and unresolvable ones flagged. Links it on the ticket.",
)
def pull_request(
    context: dg.AssetExecutionContext,
    domain: DomainCalls,
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    value_store: ValueStore,
    patch: Patch,
) -> dg.Output[PullRequest]:
    order = work_order(context, SPEC, value_store, {"patch": patch})
    ticket = order.ticket
    return run_phase(
        context,
        SPEC,
        lambda: open_pull_request(tickets, forge, agents, workspace, order, patch),
        lambda pr: "opened",
        lambda pr: {
            "pr_url": dg.MetadataValue.url(pr.url),
            "pr_number": pr.number,
            "head_sha": pr.head_sha,
            "citations_resolved": len(pr.citations_resolved),
            "citations_flagged": len(pr.citations_flagged),
            "pr_body": bounded_md(pr.body),
            **({"ticket_url": dg.MetadataValue.url(ticket.url)} if ticket.url else {}),
        },
        domain=domain,
        inputs={"patch": patch},
        order=order,
    )
