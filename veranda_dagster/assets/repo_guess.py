"""``repo_guess``: which repository the ticket is about, or the question asked instead."""

from veranda_dagster.assets._collaborators import budgeted_agent
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.models import RepoGuess, Ticket
from veranda_dagster.domain.intake import repo_confirmation, repo_detection
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.catalog import CatalogResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource


@phase_asset(
    PHASES["repo_guess"],
    RepoGuess,
    "Weighed evidence (declarations, links, former names, forks, repo and service labels, "
    "names in the text) picks the repository; a cheap-tier pass confirms, corrects or, on a "
    "medium guess, turns it into a question. A question is posted on the ticket and the run "
    "stops there.",
    outcome=lambda g: g.decision,
    details=lambda g: {
        "repo": g.repo,
        "confidence": g.confidence,
        "signal": g.signal,
        "model_verdict": g.model_verdict,
        "candidates": len(g.candidates),
        "score": g.score,
        "decided_by": next(
            (f"{e.repo}: {e.kind} ({e.weight:.2f})" for e in g.evidence if e.repo == g.repo),
            None,
        ),
        "evidence": "; ".join(f"{e.repo}: {e.kind} ({e.weight:.2f})" for e in g.evidence),
        "question_comment_id": g.question_comment_id,
    },
)
def repo_guess(
    tickets: TicketSourcesResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    catalog: CatalogResource,
    ticket: Ticket,
) -> RepoGuess:
    repos = catalog.for_ticket(ticket)
    guess = repo_detection.detect_repo(ticket, repos, model=True)  # confirmed below
    with tickets.connected() as channel:
        if guess.decision == "proceed":
            scratch = workspace.scratch_dir(ticket.id)
            agent = budgeted_agent(agents, ticket, channel)
            guess = repo_confirmation.confirm_repo_guess(guess, ticket, repos, agent, scratch)
        if guess.decision == "ask":
            text = guess.question or f"Which repository is {ticket.id} about?"
            comment_id = channel.post(ticket, text)
            guess = guess.model_copy(update={"question_comment_id": comment_id})
    return guess
