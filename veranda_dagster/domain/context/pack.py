"""The ``context_pack`` phase: clone, read facts, retrieve, write the layers into the clone.

Everything the agent will know beyond its own tools is decided here and recorded in the
``ContextPack`` value: seeds, the bounded pack and its citations, the four layers, the facts the
work loop validates with, which instruction files were written, and the tool servers every
turn is shown (never written into the clone). No model is called: the
seeds are regex, the pack is lexical, and the citations are made by the retrieval tool, so
``calls`` stays empty and the phase costs nothing to re-run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.context.code_search import CodeSearch, LocalGitGrep
from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.context.layers import (
    build_layers,
    exclude_from_git,
    operator_hints,
    write_instruction_files,
)
from veranda_dagster.domain.context.retrieval import RetrievalResult, build_pack
from veranda_dagster.domain.context.search_choice import (
    likely_queries,
    prefetch_queries,
    search_for_pack,
)
from veranda_dagster.domain.context.seeds import extract_keywords, extract_seeds, seed_candidates
from veranda_dagster.domain.core.agent import AgentPort
from veranda_dagster.domain.core.bounds import MAX_SEARCHES
from veranda_dagster.domain.core.errors import AwaitingHumanError
from veranda_dagster.domain.core.mcp_config import (
    BROWSER_OUTPUT_DIR,
    McpServer,
    resolve_playwright_mcp,
)
from veranda_dagster.domain.core.models import ContextPack, RepoGuess, Ticket


@dataclass
class ContextConfig:
    runbooks_dir: str | None = None
    """A checkout of the architecture repository's runbooks (markdown files)."""
    hints_dir: str | None = None
    """Directory of per-repo hints files named ``<org>__<name>.md``."""
    dossiers: list[str] = field(default_factory=list)
    """Texts of the expert dossiers selected for this ticket; they seed retrieval too."""
    frontend_servers: list[McpServer] = field(default_factory=lambda: [resolve_playwright_mcp()])
    """Tool servers for frontend repositories: the installed browser server, resolved where
    this worker runs. Recorded in the pack and handed to every turn; the CLI is shown them for
    the turn only (``vendors.isolation``), never through a file in the clone."""


def ticket_texts(ticket: Ticket, dossiers: list[str]) -> list[str]:
    """Where seeds come from, strongest first: the title, the description, then dossiers."""
    return [ticket.title, ticket.description, *dossiers]


def build_context_pack(
    ticket: Ticket,
    guess: RepoGuess,
    workspace: Workspace,
    search: CodeSearch,
    agent: AgentPort,
    config: ContextConfig,
) -> ContextPack:
    """Clone (or recreate) the workspace, then build and write the context for ``ticket``.

    With the clone made, the pack searches it (``search_choice``): the forge's ``search`` and
    its shared rate budget are left untouched, so no ticket waits on another's searches. The
    local search is pinned to the default branch's base sha, so a resumed run whose work
    branch already carries commits still cites the default branch."""
    if guess.decision != "proceed" or not guess.repo:
        raise AwaitingHumanError(
            f"{ticket.id}: repository not settled (decision={guess.decision}); no context built"
        )
    repo_dir = workspace.ensure()
    default_branch = workspace.default_branch()
    base_sha = workspace.base_sha()
    search, search_index = search_for_pack(search, repo_dir, base_sha)  # the clone's: no budget
    facts = read_repo_facts(repo_dir, operator_hints(config.hints_dir, guess.repo))
    files = RepoFiles(repo_dir)
    texts = ticket_texts(ticket, config.dossiers)
    pack, planned = _pack(texts, search, ticket)
    seeds = pack.seeds
    layers = build_layers(
        ticket,
        repo_dir,
        facts,
        runbooks_dir=config.runbooks_dir,
        hints_dir=config.hints_dir,
        pack=pack,
        repo=guess.repo,
        seeds=seeds,
        files=files,
    )
    written = write_instruction_files(repo_dir, layers, pack, agent.instruction_files(), files)
    mcp_servers: list[McpServer] = []
    if facts.frontend and config.frontend_servers:
        mcp_servers = list(config.frontend_servers)
        exclude_from_git(repo_dir, [BROWSER_OUTPUT_DIR])  # the browser server's output folder
    return ContextPack(
        ticket_id=ticket.id,
        repo=guess.repo,
        clone_url=workspace.clone_url,
        default_branch=default_branch,
        base_sha=base_sha,
        branch=workspace.branch,
        seeds=seeds,
        searches=pack.searches,
        searches_planned=planned,
        search_wait_s=round(float(getattr(search, "waited_s", 0.0)), 3),
        search_index=search_index,
        bytes=pack.bytes,
        files=pack.files,
        citations=pack.citations,
        unavailable_signals=pack.unavailable,
        layers=layers,
        facts=facts,
        instruction_files=written,
        mcp_servers=mcp_servers,
        refused_files=list(dict.fromkeys([*facts.refused_files, *files.refused])),
        guess_calls=guess.calls,
    )


def _pack(texts: list[str], search: CodeSearch, ticket: Ticket) -> tuple[RetrievalResult, int]:
    """Ranked seed candidates, searched until ``MAX_SEEDS`` of them match the tree; plain ticket
    words spend only the searches the seeds leave over. The ticket's own text (not the
    dossiers) is the full-text query and the source of frames and error messages.

    A search index with a shared rate budget (``plan``; only a pack without a clone has one)
    is asked how many searches are free now, and the pack is planned within that, never
    sleeping for more (a pack that finds the budget spent packs from what needs no search);
    the unspent slots go back to the other runs. Returns the pack and the searches it was
    allowed."""
    candidates = seed_candidates(texts)
    keywords = extract_keywords(texts, extract_seeds(texts), MAX_SEARCHES)
    ticket_text = f"{ticket.title}\n{ticket.description}"
    prefetch_queries(search, likely_queries(candidates, keywords, ticket_text))
    plan = getattr(search, "plan", None)
    if not callable(plan):
        pack = build_pack(
            candidates, search, keywords=keywords, ticket_text=ticket_text, title=ticket.title
        )
        return pack, MAX_SEARCHES
    allowed = int(plan(MAX_SEARCHES, 0))  # what is free now: never a wait
    try:
        pack = build_pack(
            candidates,
            search,
            keywords=keywords,
            ticket_text=ticket_text,
            title=ticket.title,
            max_searches=allowed,
        )
        return pack, allowed
    finally:
        search.finish()  # type: ignore[attr-defined]


def build_local_pack(repo_dir: str | Path, ticket: Ticket, dossiers: list[str]) -> dict[str, Any]:
    """The ``veranda pack`` JSON: seeds, then the pack over the clone at HEAD (no model). Plain
    ticket words spend only the searches the seeds leave over."""
    texts = ticket_texts(ticket, dossiers)
    pack, _ = _pack(texts, LocalGitGrep(repo_dir), ticket)
    return {
        "seeds": pack.seeds,
        "searches": pack.searches,
        "bytes": pack.bytes,
        "files": [f.model_dump() for f in pack.files],
        "citations": [c.model_dump() for c in pack.citations],
    }
