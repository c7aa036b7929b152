"""``feedback``: revisions on human PR comments, bounded at ten rounds over the PR's life.

Re-materialized by the PR-feedback sensor; each run starts from the stored previous value, so
comments already handled are never answered twice.
"""

import dagster as dg

from veranda_dagster.assets._policy import PHASES, phase_asset
from veranda_dagster.assets._shell import run_phase
from veranda_dagster.domain.errors import StoredValueError
from veranda_dagster.domain.models import ContextPack, Feedback, PullRequest, Ticket
from veranda_dagster.resources.pipeline import PipelineResource
from veranda_dagster.storage import ValueStore

SPEC = PHASES["feedback"]


@phase_asset(
    SPEC, "Answers new human comments on the PR with commits; at most MAX_FEEDBACK_ROUNDS."
)
def feedback(
    context: dg.AssetExecutionContext,
    pipeline: PipelineResource,
    value_store: ValueStore,
    ticket: Ticket,
    context_pack: ContextPack,
    pull_request: PullRequest,
) -> dg.Output[Feedback]:
    def call() -> Feedback:
        previous = value_store.load_or_none("feedback", context.partition_key)
        if previous is not None and not isinstance(previous, Feedback):
            raise StoredValueError(
                f"asset 'feedback' partition {context.partition_key!r}: stored a "
                f"{type(previous).__name__}, not Feedback"
            )
        return pipeline.process_feedback(ticket, context_pack, pull_request, previous)

    return run_phase(
        context,
        SPEC,
        call,
        lambda f: "bound_reached" if f.bound_reached else "processed",
        lambda f: {
            "feedback_rounds": len(f.rounds),
            "comments_processed": len(f.processed_comment_ids),
            "head_sha": f.head_sha or "none",
        },
    )
