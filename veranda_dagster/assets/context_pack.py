"""``context_pack``: the bounded lexical pack and the four instruction layers, in the clone."""

from veranda_dagster.assets._metadata import pack_table
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.assets._shell import phase_asset
from veranda_dagster.domain.core.bounds import MAX_PACK_BYTES, MAX_PACK_FILES, MAX_SEARCHES
from veranda_dagster.domain.core.errors import AwaitingHumanError
from veranda_dagster.domain.core.models import ContextPack, RepoGuess, Ticket
from veranda_dagster.resources.pipeline import PipelineResource


def require_repo(guess: RepoGuess) -> None:
    """A guess that asked stops the run here; the stored guess (and its question) stays."""
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
        "unavailable_signals": ", ".join(p.unavailable_signals) or "none",
        "searches_planned": p.searches_planned if p.searches_planned is not None else p.searches,
        "search_budget_wait_s": p.search_wait_s,
        "search_backend": p.search_backend,
        "seeds": len(p.seeds),
        "citations": len(p.citations),
        "layers": ", ".join(layer.name for layer in p.layers) or "none",
        "refused_files": len(p.refused_files),
        "refused": "; ".join(p.refused_files)[:1000] or "none",
        "files": pack_table(p.files),
    },
)
def context_pack(pipeline: PipelineResource, ticket: Ticket, repo_guess: RepoGuess) -> ContextPack:
    require_repo(repo_guess)
    return pipeline.build_context_pack(ticket, repo_guess)
