"""``repo_guess``: which repository the ticket is about, or the question asked instead."""

import dagster as dg

from veranda_dagster.assets._policy import PHASES, phase_asset
from veranda_dagster.assets._shell import run_phase
from veranda_dagster.domain.models import RepoGuess, Ticket
from veranda_dagster.resources.pipeline import PipelineResource

SPEC = PHASES["repo_guess"]


@phase_asset(
    SPEC,
    "Four scored signals pick the repository; a cheap-tier pass confirms or corrects it. "
    "On low confidence the question is posted on the ticket and the run stops there.",
)
def repo_guess(
    context: dg.AssetExecutionContext, pipeline: PipelineResource, ticket: Ticket
) -> dg.Output[RepoGuess]:
    return run_phase(
        context,
        SPEC,
        lambda: pipeline.guess_repo(ticket),
        lambda g: g.decision,
        lambda g: {
            "repo": g.repo or "none",
            "confidence": g.confidence,
            "signal": g.signal or "none",
            "model_verdict": g.model_verdict,
            "candidates": len(g.candidates),
            "question_comment_id": g.question_comment_id or "none",
        },
    )
