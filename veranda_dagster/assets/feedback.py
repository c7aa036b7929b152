"""``feedback``: revisions on human PR comments, bounded at ten rounds over the PR's life.

Re-materialized by the PR-feedback sensor; each run starts from the stored previous value, so
comments already handled are never answered twice.
"""

import dagster as dg

from veranda_dagster.assets._collaborators import work_on
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.errors import StoredValueError
from veranda_dagster.domain.core.models import Feedback, PullRequest, WorkOrder
from veranda_dagster.domain.core.work_order import packed
from veranda_dagster.domain.deliver import feedback as deliver_feedback
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.storage import ValueStore


def previous_feedback(value_store: ValueStore, key: str) -> Feedback | None:
    """The ticket's stored feedback value, which this run continues from; ``None`` before the
    first round. Anything else stored under it is refused, not answered over."""
    previous = value_store.load_or_none("feedback", key)
    if previous is not None and not isinstance(previous, Feedback):
        raise StoredValueError(
            f"asset 'feedback' partition {key!r}: stored a {type(previous).__name__}, not Feedback"
        )
    return previous


@phase_asset(
    PHASES["feedback"],
    Feedback,
    "Answers new human comments on the PR with commits; at most MAX_FEEDBACK_ROUNDS.",
    outcome=lambda f: "bound_reached" if f.bound_reached else "processed",
    details=lambda f: {
        "feedback_rounds": len(f.rounds),
        "comments_processed": len(f.processed_comment_ids),
        "head_sha": f.head_sha,
    },
)
def feedback(
    context: dg.AssetExecutionContext,
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    value_store: ValueStore,
    order: WorkOrder,
    pull_request: PullRequest,
) -> Feedback:
    previous = previous_feedback(value_store, context.partition_key)
    with work_on(order, tickets, forge, agents, workspace) as w:
        return deliver_feedback.process_feedback(
            order.ticket,
            packed(order),
            pull_request,
            w.workspace,
            w.agent,
            w.forge,
            previous,
            validation_timeout_s=workspace.validation_timeout_s,
        )
