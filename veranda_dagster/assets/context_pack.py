"""``context_pack``: the bounded lexical pack and the four instruction layers, in the clone."""

from collections.abc import Mapping

from veranda_dagster.assets._collaborators import budgeted_agent, clone, code_search
from veranda_dagster.assets._metadata import pack_table
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.context import pack
from veranda_dagster.domain.core.bounds import MAX_PACK_BYTES, MAX_PACK_FILES, MAX_SEARCHES
from veranda_dagster.domain.core.errors import AwaitingHumanError, InputError
from veranda_dagster.domain.core.models import ContextPack, RepoGuess, WorkOrder
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.catalog import ContextLayersResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource


def require_repo(given: Mapping[str, object]) -> None:
    """A guess that asked stops the run here; the stored guess (and its question) stays."""
    guess = given["repo_guess"]
    if not isinstance(guess, RepoGuess):
        raise InputError(f"context_pack needs a RepoGuess, not a {type(guess).__name__}")
    if guess.decision == "ask" or not guess.repo:
        where = f" (comment {guess.question_comment_id})" if guess.question_comment_id else ""
        raise AwaitingHumanError(
            f"ticket {guess.ticket_id}: waiting for an answer to "
            f"{guess.question or 'which repository?'!r}{where}"
        )


@phase_asset(
    PHASES["context_pack"],
    ContextPack,
    "Seeds from the ticket, searched in the clone (the forge's code index only without one); "
    f"at most {MAX_SEARCHES} searches, "
    f"{MAX_PACK_FILES} files, {MAX_PACK_BYTES:,} bytes. Citations are minted by retrieval only. "
    "Layers are written into the clone.",
    outcome=lambda p: "packed",
    details=lambda p: {
        "repo": p.repo,
        "base_sha": p.base_sha,
        "branch": p.branch,
        "pack_bytes": p.bytes,
        "pack_files": len(p.files),
        "pack_searches": p.searches,
        "unavailable_signals": ", ".join(p.unavailable_signals),
        "searches_planned": p.searches_planned if p.searches_planned is not None else p.searches,
        "search_budget_wait_s": p.search_wait_s,
        "search_index": p.search_index,
        "seeds": len(p.seeds),
        "citations": len(p.citations),
        "layers": ", ".join(layer.name for layer in p.layers),
        "refused_files": len(p.refused_files),
        "refused": "; ".join(p.refused_files)[:1000],
        "files": pack_table(p.files),
    },
    precondition=require_repo,
)
def context_pack(
    tickets: TicketSourcesResource,
    forge: ForgeResource,
    agents: AgentsResource,
    workspace: WorkspaceResource,
    layers: ContextLayersResource,
    order: WorkOrder,
    repo_guess: RepoGuess,
) -> ContextPack:
    """The ticket comes in the order the guess carries; the guess is the predecessor."""
    ticket = order.ticket
    if not repo_guess.repo:
        raise InputError(f"ticket {ticket.id}: no repository was decided to pack")
    clone_of_repo = clone(forge, workspace, ticket.id, repo_guess.repo)
    with (
        code_search(forge, agents, repo_guess.repo, clone_of_repo) as search,
        tickets.connected() as channel,
    ):
        agent = budgeted_agent(agents, ticket, channel)
        return pack.build_context_pack(
            ticket, repo_guess, clone_of_repo, search, agent, layers.config()
        )
