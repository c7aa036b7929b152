"""``review_rounds``: a simplify pass, then fix-and-re-review bounded at five rounds."""

from veranda_dagster.assets._metadata import review_md
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.models import ContextPack, PullRequest, ReviewRounds, Ticket
from veranda_dagster.resources.pipeline import PipelineResource


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
    pipeline: PipelineResource, ticket: Ticket, context_pack: ContextPack, pull_request: PullRequest
) -> ReviewRounds:
    return pipeline.review(ticket, context_pack, pull_request)
