"""``review_rounds``: a simplify pass, then fix-and-re-review bounded at five rounds."""

import dagster as dg

from veranda_dagster.assets._metadata import review_md
from veranda_dagster.assets._policy import PHASES, phase_asset
from veranda_dagster.assets._shell import run_phase
from veranda_dagster.domain.models import ContextPack, PullRequest, ReviewRounds, Ticket
from veranda_dagster.resources.pipeline import PipelineResource

SPEC = PHASES["review_rounds"]


@phase_asset(SPEC, "The agent reviews its own diff in a separate seat; at most MAX_REVIEW_ROUNDS.")
def review_rounds(
    context: dg.AssetExecutionContext,
    pipeline: PipelineResource,
    ticket: Ticket,
    context_pack: ContextPack,
    pull_request: PullRequest,
) -> dg.Output[ReviewRounds]:
    return run_phase(
        context,
        SPEC,
        lambda: pipeline.review(ticket, context_pack, pull_request),
        lambda r: r.stopped,
        lambda r: {
            "review_rounds": len(r.rounds),
            "findings": sum(len(x.findings) for x in r.rounds),
            "head_sha": r.head_sha,
            "verdicts": review_md(r.rounds),
        },
    )
