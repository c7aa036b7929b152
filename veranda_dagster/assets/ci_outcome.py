"""``ci_outcome``: the PR head's checks, with exactly one grounded repair attempt."""

import dagster as dg

from veranda_dagster.assets._policy import PHASES, phase_asset
from veranda_dagster.assets._shell import run_phase
from veranda_dagster.domain.models import (
    CIOutcome,
    ContextPack,
    PullRequest,
    ReviewRounds,
    Ticket,
)
from veranda_dagster.resources.pipeline import PipelineResource

SPEC = PHASES["ci_outcome"]


@phase_asset(
    SPEC,
    "Waits for the head's check runs; on red, one repair grounded in the static-analysis "
    "violations of this commit (or the log tail), then waits again.",
)
def ci_outcome(
    context: dg.AssetExecutionContext,
    pipeline: PipelineResource,
    ticket: Ticket,
    context_pack: ContextPack,
    pull_request: PullRequest,
    review_rounds: ReviewRounds,
) -> dg.Output[CIOutcome]:
    return run_phase(
        context,
        SPEC,
        lambda: pipeline.await_ci(ticket, context_pack, pull_request, review_rounds),
        lambda c: c.status,
        lambda c: {
            "ci_status": c.status,
            "head_sha": c.head_sha,
            "checks": len(c.checks),
            "repairs": c.repairs,
            "repair_grounding": c.repair_grounding,
            "violations": len(c.violations),
            "polls": c.polls,
        },
    )
