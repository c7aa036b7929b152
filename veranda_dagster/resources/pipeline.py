"""``PipelineResource``: the one seam between the asset graph and the domain.

Each phase asset calls exactly one method here. A method takes what the domain entry point
needs from the outside-system resources this one is composed of (Dagster nested resources:
``tickets``, ``forge``, ``agents``, ``workspace``, each bound once in the Definitions under its
own key and shared with the sensors) and delegates to it. The entry points are plain imports of
their modules (``work_ci.await_ci``), so go-to-definition reaches the domain and a test can
still patch one module's function. A test replaces a collaborator by passing a different
resource (a ``ForgeResource`` whose ``client()`` returns a fake), not by subclassing this.

Each phase method opens the clients it needs (the forge's, the ticket sources', a remote code
search) for the length of its domain call and closes them on return, error or not: with the
in-process executor one run worker runs every phase of a ticket, so a client per call left to
the collector would hold its connection pool for the rest of the run.

Secrets live only in the nested resources (bound with ``dg.EnvVar``, hidden from their reprs)
and are handed only to clients, which redact them; nothing here logs or returns config.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from functools import cached_property

import dagster as dg
from pydantic import Field

from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.context import pack as context
from veranda_dagster.domain.context.code_search import CodeSearch, LocalGitGrep
from veranda_dagster.domain.core.budget import BudgetedAgent
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.domain.core.models import (
    CIOutcome,
    ContextPack,
    Feedback,
    Patch,
    PhaseValue,
    PullRequest,
    RedTests,
    RepoGuess,
    ReviewRounds,
    Ticket,
)
from veranda_dagster.domain.core.orgs import org_of
from veranda_dagster.domain.deliver import ci as work_ci
from veranda_dagster.domain.deliver import feedback as work_feedback
from veranda_dagster.domain.deliver import pull_request as work_pull_request
from veranda_dagster.domain.deliver import review as work_review
from veranda_dagster.domain.intake import repo_confirmation, repo_detection
from veranda_dagster.domain.intake.catalog import Catalog
from veranda_dagster.domain.work import patch as work_patch
from veranda_dagster.domain.work import red_tests as work_red_tests
from veranda_dagster.forges.registry import ForgeClient
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.orgs import OrgCatalog, catalog_for
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sources.channel import TicketChannel


class PipelineResource(dg.ConfigurableResource):
    """The phases' collaborators, composed; one method per phase."""

    tickets: TicketSourcesResource
    forge: ForgeResource
    agents: AgentsResource
    workspace: WorkspaceResource
    catalog_path: str = ""
    """The repo catalog file (``VERANDA_CATALOG``) ``repo_guess`` detects from."""
    runbooks_dir: str = ""
    hints_dir: str = ""
    org_catalogs: list[OrgCatalog] = Field(default_factory=list)
    """With an orgs file (``VERANDA_ORGS``): each org's catalog and the sources it takes
    tickets from, in place of ``catalog_path``."""

    # --- collaborators -----------------------------------------------------------------------

    @contextmanager
    def forge_client(self) -> Iterator[ForgeClient]:
        """The forge's client, closed on leaving."""
        with closing(self.forge.client()) as client:
            yield client

    def agent(self, ticket: Ticket, channel: TicketChannel, repo: str = "") -> BudgetedAgent:
        """The resolving agent, held to the ticket's budget (and, once ``repo`` is known, its
        org's daily one): every phase's turns go through one ``BudgetedAgent`` reading and
        writing the ticket's durable spend ledger; the note that a cap was hit goes to
        ``channel``, once per cap however often it is hit."""
        key = f"budget:{self.agents.ticket_cap_usd(ticket.id):g}"
        org = org_of(repo) if repo and "/" in repo else ""
        return self.agents.agent(ticket, lambda text: channel.post(ticket, text, key=key), org)

    def clone(
        self, ticket_id: str, repo: str | None, clone_url: str = "", branch: str = ""
    ) -> Workspace:
        """The ticket's clone: of ``clone_url`` when the pack recorded one, else of the forge's
        URL for ``repo``; the forge's token and git username go with it."""
        if not repo or "/" not in repo:
            raise InputError(f"ticket {ticket_id}: repository {repo!r} is not <org>/<name>")
        forge = self.forge.for_repo(repo)  # the repository's org's forge, token and user
        return self.workspace.clone(
            ticket_id, clone_url or forge.clone_url(repo), branch, forge.token, forge.git_username
        )

    def pack_workspace(self, ticket: Ticket, pack: ContextPack) -> Workspace:
        return self.clone(ticket.id, pack.repo, pack.clone_url, pack.branch)

    @contextmanager
    def code_search(self, repo: str, workspace: Workspace) -> Iterator[CodeSearch]:
        """The forge's code search when it holds a token (closed on leaving), else ``git
        grep`` in the clone."""
        forge = self.forge.for_repo(repo)
        if not forge.configured:
            yield LocalGitGrep(workspace.path)
            return
        search = forge.code_search(repo, self.agents.budget_state())
        try:
            yield search
        finally:
            close = getattr(search, "close", None)
            if callable(close):
                close()

    # --- phases ------------------------------------------------------------------------------

    def fetch_ticket(self, key: str) -> Ticket:
        return self.tickets.fetch(key)

    def catalog(self, ticket: Ticket) -> Catalog:
        """What ``ticket`` may go to: with an orgs file, the catalogs of the orgs taking its
        source, merged; else the one catalog."""
        if self.org_catalogs:
            return catalog_for(ticket, self.org_catalogs)
        if not self.catalog_path:
            raise ConfigError("catalog_path is empty: set VERANDA_CATALOG to the repo catalog file")
        return repo_detection.load_catalog(self.catalog_path)

    def guess_repo(self, ticket: Ticket) -> RepoGuess:
        catalog = self.catalog(ticket)
        guess = repo_detection.detect_repo(ticket, catalog, model=True)  # confirmed below
        with self.tickets.connected() as channel:
            if guess.decision == "proceed":
                scratch = self.workspace.scratch_dir(ticket.id)
                guess = repo_confirmation.confirm_repo_guess(
                    guess, ticket, catalog, self.agent(ticket, channel), scratch
                )
            if guess.decision == "ask":
                text = guess.question or f"Which repository is {ticket.id} about?"
                comment_id = channel.post(ticket, text)
                guess = guess.model_copy(update={"question_comment_id": comment_id})
        return guess

    def build_context_pack(self, ticket: Ticket, guess: RepoGuess) -> ContextPack:
        if not guess.repo:
            raise InputError(f"ticket {ticket.id}: no repository was decided to pack")
        workspace = self.clone(ticket.id, guess.repo)
        with self.code_search(guess.repo, workspace) as search, self.tickets.connected() as channel:
            return context.build_context_pack(
                ticket,
                guess,
                workspace,
                search,
                self.agent(ticket, channel),
                self._context_config(),
            )

    def _context_config(self) -> context.ContextConfig:
        """The layer directories that are set; the rest keep the config's defaults."""
        return context.ContextConfig(
            runbooks_dir=self.runbooks_dir or None, hints_dir=self.hints_dir or None
        )

    @contextmanager
    def _work(self, ticket: Ticket, pack: ContextPack) -> Iterator[WorkClients]:
        """A work phase's collaborators on the pack's clone, open for the domain call."""
        with ExitStack() as opened:
            channel = opened.enter_context(self.tickets.connected())
            workspace = self.pack_workspace(ticket, pack)
            yield WorkClients(self, ticket, workspace, channel, opened, pack.repo or "")

    def write_red_tests(self, ticket: Ticket, pack: ContextPack) -> RedTests:
        timeout_s = self.workspace.validation_timeout_s
        with self._work(ticket, pack) as w:
            return work_red_tests.write_red_tests(
                ticket, pack, w.workspace, w.agent, validation_timeout_s=timeout_s
            )

    def implement(self, ticket: Ticket, pack: ContextPack, red: RedTests) -> Patch:
        timeout_s = self.workspace.validation_timeout_s
        with self._work(ticket, pack) as w:
            return work_patch.implement(
                ticket, pack, red, w.workspace, w.agent, validation_timeout_s=timeout_s
            )

    def open_pull_request(
        self,
        ticket: Ticket,
        pack: ContextPack,
        patch: Patch,
        earlier: Sequence[PhaseValue] = (),
    ) -> PullRequest:
        """``earlier`` phases' calls join the PR's what-ran table, so a fallback in the repo
        confirmation or the red phase is reported too."""
        with self._work(ticket, pack) as w:
            return work_pull_request.open_pull_request(
                ticket, pack, patch, w.workspace, w.forge, w.post, earlier=earlier
            )

    def review(self, ticket: Ticket, pack: ContextPack, pr: PullRequest) -> ReviewRounds:
        timeout_s = self.workspace.validation_timeout_s
        with self._work(ticket, pack) as w:
            return work_review.review_rounds(
                ticket, pack, pr, w.workspace, w.agent, w.forge, validation_timeout_s=timeout_s
            )

    def await_ci(
        self, ticket: Ticket, pack: ContextPack, pr: PullRequest, review: ReviewRounds
    ) -> CIOutcome:
        timeout_s = self.workspace.ci_wait_timeout_s
        with self._work(ticket, pack) as w:
            return work_ci.await_ci(
                ticket, pack, pr, review, w.workspace, w.agent, w.forge, timeout_s=timeout_s
            )

    def process_feedback(
        self, ticket: Ticket, pack: ContextPack, pr: PullRequest, previous: Feedback | None
    ) -> Feedback:
        timeout_s = self.workspace.validation_timeout_s
        with self._work(ticket, pack) as w:
            return work_feedback.process_feedback(
                ticket,
                pack,
                pr,
                w.workspace,
                w.agent,
                w.forge,
                previous,
                validation_timeout_s=timeout_s,
            )


class WorkClients:
    """What a work phase hands its domain call: the clone and the open ticket channel; the
    forge client and the budgeted agent are built only when the phase takes them (writing tests
    and implementing talk to no forge; opening a pull request calls no model, so no backends
    file is read for it). What is opened here closes with the phase's ``opened`` stack."""

    def __init__(
        self,
        pipeline: PipelineResource,
        ticket: Ticket,
        workspace: Workspace,
        channel: TicketChannel,
        opened: ExitStack,
        repo: str = "",
    ) -> None:
        self._pipeline, self._ticket, self._opened = pipeline, ticket, opened
        self.workspace, self.channel, self._repo = workspace, channel, repo

    @cached_property
    def forge(self) -> ForgeClient:
        return self._opened.enter_context(self._pipeline.forge_client())

    @cached_property
    def agent(self) -> BudgetedAgent:
        return self._pipeline.agent(self._ticket, self.channel, self._repo)

    def post(self, text: str) -> str | None:
        """A note on the ticket's own thread."""
        return self.channel.post(self._ticket, text)
