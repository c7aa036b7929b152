"""``repo_guess``: which repository the ticket is about, or the question asked instead."""

from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.models import RepoGuess, Ticket
from veranda_dagster.resources.pipeline import PipelineResource


@phase_asset(
    PHASES["repo_guess"],
    RepoGuess,
    "Weighed evidence (declarations, links, former names, forks, repo and service labels, "
    "names in the text) picks the repository; a cheap-tier pass confirms, corrects or, on a "
    "medium guess, turns it into a question. A question is posted on the ticket and the run "
    "stops there.",
    outcome=lambda g: g.decision,
    details=lambda g: {
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
        "evidence": "; ".join(f"{e.repo}: {e.kind} ({e.weight:.2f})" for e in g.evidence) or "none",
        "question_comment_id": g.question_comment_id or "none",
    },
)
def repo_guess(pipeline: PipelineResource, ticket: Ticket) -> RepoGuess:
    return pipeline.guess_repo(ticket)
