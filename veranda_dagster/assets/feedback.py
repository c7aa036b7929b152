"""``feedback``: revisions on human PR comments, bounded at ten rounds over the PR's life.

Re-materialized by the PR-feedback sensor; each run starts from the stored previous value, so
comments already handled are never answered twice.
"""

import dagster as dg

from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.errors import StoredValueError
from veranda_dagster.domain.core.models import ContextPack, Feedback, PullRequest, Ticket
from veranda_dagster.resources.pipeline import PipelineResource
from veranda_dagster.storage import ValueStore


@phase_asset(
    PHASES["feedback"],
    Feedback,
    "Answers new human comments on the PR with commits; at most MAX_FEEDBACK_ROUNDS.",
    outcome=lambda f: "bound_reached" if f.bound_reached else "processed",
    details=lambda f: {
        "feedback_rounds": len(f.rounds),
        "comments_processed": len(f.processed_comment_ids),
        "head_sha": f.head_sha or "none",
    },
)
def feedback(
    context: dg.AssetExecutionContext,
    pipeline: PipelineResource,
    value_store: ValueStore,
    ticket: Ticket,
    context_pack: ContextPack,
    pull_request: PullRequest,
) -> Feedback:
    previous = value_store.load_or_none("feedback", context.partition_key)
    if previous is not None and not isinstance(previous, Feedback):
        raise StoredValueError(
            f"asset 'feedback' partition {context.partition_key!r}: stored a "
            f"{type(previous).__name__}, not Feedback"
        )
    return pipeline.process_feedback(ticket, context_pack, pull_request, previous)
