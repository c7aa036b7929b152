"""``repo_guess``: which repository the ticket is about, or the question asked instead."""

import dagster as dg

from veranda_dagster.assets._policy import PHASES, phase_asset
from veranda_dagster.assets._shell import run_phase
from veranda_dagster.domain.models import RepoGuess, Ticket
from veranda_dagster.resources.pipeline import PipelineResource

SPEC = PHASES["repo_guess"]


@phase_asset(
    SPEC,
    "Weighed evidence (declarations, links, former names, forks, repo and service labels, "
    "names in the text) picks the repository; a cheap-tier pass confirms, corrects or, on a "
    "medium guess, turns it into a question. A question is posted on the ticket and the run "
    "stops there.",
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
            "score": g.score if g.score is not None else "none",
            "decided_by": next(
                (f"{e.repo}: {e.kind} ({e.weight:.2f})" for e in g.evidence if e.repo == g.repo),
                "none",
            ),
            "evidence": "; ".join(f"{e.repo}: {e.kind} ({e.weight:.2f})" for e in g.evidence)
            or "none",
            "question_comment_id": g.question_comment_id or "none",
        },
    )
