"""``PipelineResource``: the one seam between the asset graph and the domain.

Each phase asset calls exactly one method here. A method builds what the domain entry point
needs from config (clients, the agent, the ticket's workspace) and delegates to it. The entry
points are plain imports of their modules (``work_ci.await_ci``), so go-to-definition reaches
the domain and a test can still patch one module's function. Tests replace this resource with
a subclass that returns scripted values.

Secrets (``*_token``) arrive through ``dg.EnvVar`` and are handed only to clients, which redact
them; nothing here logs or returns config.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from veranda_dagster.clients.forges import ForgeProvider, forge_provider
from veranda_dagster.clients.github_code_search import GitHubCodeSearch
from veranda_dagster.clients.jira import JiraClient
from veranda_dagster.clients.jira_ticket import JiraTicketSource
from veranda_dagster.clients.limits import GITHUB_CODE_SEARCH_PER_MINUTE
from veranda_dagster.clients.linear import LinearClient
from veranda_dagster.clients.slack import SlackClient
from veranda_dagster.clients.ticket_channel import TicketChannel
from veranda_dagster.clients.ticket_sources import ticket_sources
from veranda_dagster.domain import context, intake, repo_confirmation, repo_detection
from veranda_dagster.domain.bounds import CI_WAIT_TIMEOUT_S, TICKET_BUDGET_USD, VALIDATION_TIMEOUT_S
from veranda_dagster.domain.budget import BudgetedAgent
from veranda_dagster.domain.code_search import CodeSearch, LocalGitGrep
from veranda_dagster.domain.errors import ConfigError, InputError
from veranda_dagster.domain.models import (
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
from veranda_dagster.domain.ticket_key import ticket_dir
from veranda_dagster.domain.work import ci as work_ci
from veranda_dagster.domain.work import feedback as work_feedback
from veranda_dagster.domain.work import patch as work_patch
from veranda_dagster.domain.work import pull_request as work_pull_request
from veranda_dagster.domain.work import red_tests as work_red_tests
from veranda_dagster.domain.work import review as work_review
from veranda_dagster.domain.work.forge import Forge
from veranda_dagster.domain.workspace import Workspace
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.io_manager import default_values_dir
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.search_budget import (
    BudgetState,
    FileBudgetState,
    PostgresBudgetState,
    SearchBudget,
    budget_key,
)
from veranda_dagster.vendors.config import BackendsConfig
from veranda_dagster.vendors.resolver import build_agent


def branch_for(ticket_id: str) -> str:
    """The ticket's work branch on the forge: ``veranda/<ticket-key-lowercased>``."""
    return f"veranda/{ticket_id.lower()}"


def default_workspace_root() -> str:
    home = os.environ.get("DAGSTER_HOME")
    return str(Path(home) / "workspaces") if home else str(Path(".veranda") / "workspaces")


class PipelineResource(dg.ConfigurableResource):
    """Config of every phase's collaborators; one method per phase."""

    linear_url: str = "https://api.linear.app/graphql"
    linear_token: str = ""
    slack_url: str = "https://slack.com/api"
    slack_token: str = ""
    github_api_url: str = "https://api.github.com"
    github_git_base: str = "https://github.com"
    """Where clones come from: ``<github_git_base>/<org>/<name>.git`` (a local dir in the sim)."""
    github_token: str = ""
    forge_name: str = "github"
    """The forge row of ``clients.forges`` (``VERANDA_FORGE``: ``github`` or ``gitlab``)."""
    gitlab_api_url: str = ""
    gitlab_git_base: str = ""
    gitlab_token: str = ""
    sources: str = "linear,slack"
    """Enabled ticket sources (``VERANDA_SOURCES``); ``jira`` adds the Jira source."""
    jira_base_url: str = ""
    jira_email: str = ""
    jira_token: str = ""
    jira_api_version: str = ""
    jira_label: str = "veranda"
    jira_assignee: str = ""
    jira_project: str = ""
    catalog_path: str = ""
    workspace_root: str = ""
    """Parent of the per-ticket clones; empty = ``$DAGSTER_HOME/workspaces``."""
    backends_file: str = ""
    """JSON/YAML ``BackendsConfig``; empty = every family in default order."""
    runbooks_dir: str = ""
    hints_dir: str = ""
    code_search_per_minute: int = GITHUB_CODE_SEARCH_PER_MINUTE
    """The forge's code-search rate (GitHub.com: 10/min; GitHub Enterprise Server sets its own)."""
    ci_wait_timeout_s: float = CI_WAIT_TIMEOUT_S
    """How long ``ci_outcome`` waits for the PR head's checks (``CI_WAIT_TIMEOUT_S``)."""
    validation_timeout_s: float = VALIDATION_TIMEOUT_S
    """Bound on each repo command ``red_tests``/``patch`` run (``VALIDATION_TIMEOUT_S``)."""
    ticket_budget_usd: float = TICKET_BUDGET_USD
    """USD one ticket may spend on model turns (``VERANDA_TICKET_BUDGET_USD``)."""
    ledger_backend: str = "filesystem"
    ledger_dir: str = ""
    ledger_postgres_url: str = ""
    """Where the spend ledger lives: the value store's own backend, directory and database
    (``VERANDA_VALUE_STORE``/``VERANDA_VALUES_DIR``/``VERANDA_POSTGRES_URL``)."""

    # --- collaborators -----------------------------------------------------------------------

    def linear_client(self) -> LinearClient | None:
        if not self.linear_token:
            return None
        return LinearClient(self.linear_url, self.linear_token)

    def slack_client(self) -> SlackClient | None:
        if not self.slack_token:
            return None
        return SlackClient(self.slack_url, self.slack_token)

    def ticket_sources(self) -> list[JiraTicketSource]:
        """The ported sources enabled in ``sources`` and configured (Jira: a URL and token)."""
        enabled = {s.strip().lower() for s in self.sources.split(",") if s.strip()}
        if "jira" not in enabled or not (self.jira_base_url and self.jira_token):
            return []
        client = JiraClient(
            self.jira_base_url,
            self.jira_token,
            email=self.jira_email or None,
            api_version=(self.jira_api_version or None),  # type: ignore[arg-type]
            label=self.jira_label or None,
            assignee=self.jira_assignee or None,
            project=self.jira_project or None,
        )
        return [JiraTicketSource(client)]

    def channel(self) -> TicketChannel:
        return TicketChannel(self.linear_client(), self.slack_client(), self.ticket_sources())

    def forge_row(self) -> ForgeProvider:
        return forge_provider(self.forge_name or "github")

    def _forge_settings(self) -> tuple[str, str, str]:
        """``(api url, git base, token)`` of the chosen forge."""
        if self.forge_row().name == "gitlab":
            return self.gitlab_api_url, self.gitlab_git_base, self.gitlab_token
        return self.github_api_url, self.github_git_base, self.github_token

    def forge(self) -> Forge:
        api_url, _, token = self._forge_settings()
        return self.forge_row().client(api_url, token or None)

    def agent(self, ticket: Ticket) -> BudgetedAgent:
        """The resolving agent, held to the ticket's budget: every phase's turns go through
        one ``BudgetedAgent`` reading and writing the ticket's durable spend ledger."""
        inner = build_agent(BackendsConfig.load(self.backends_file or None))
        channel = self.channel()
        key = f"budget:{self.ticket_budget_usd:g}"  # one note per cap, however often it is hit
        return BudgetedAgent(
            inner,
            ticket.id,
            self.ticket_budget_usd,
            self.ledger(),
            notify=lambda text: channel.post(ticket, text, key=key),
        )

    def ledger(self) -> StoreLedger:
        store = ValueStore(
            backend=self.ledger_backend,
            base_dir=self.ledger_dir,
            postgres_url=self.ledger_postgres_url,
        )
        return store.ledger()

    def search_budget(self) -> SearchBudget:
        """The forge token's one code-search budget, kept where the ledger is kept (a file
        beside the values, or the value store's database), so every run that holds the token
        on this deployment draws from it: concurrent packs and retried steps included."""
        state: BudgetState
        if self.ledger_backend == "postgres":
            state = PostgresBudgetState(self.ledger_postgres_url)
        else:
            state = FileBudgetState(self.ledger_dir or default_values_dir())
        api_url, _, token = self._forge_settings()
        key = budget_key(api_url, token)
        return SearchBudget(state, key, self.code_search_per_minute)

    def workspace(
        self, ticket_id: str, repo: str | None, clone_url: str = "", branch: str = ""
    ) -> Workspace:
        _, git_base, token = self._forge_settings()
        if not clone_url:
            if not repo or "/" not in repo:
                raise InputError(f"ticket {ticket_id}: repository {repo!r} is not <org>/<name>")
            clone_url = self.forge_row().clone_url(git_base, repo)
        root = self.workspace_root or default_workspace_root()
        return Workspace(root, ticket_id, clone_url, branch or branch_for(ticket_id), token or None)

    def pack_workspace(self, ticket: Ticket, pack: ContextPack) -> Workspace:
        return self.workspace(ticket.id, pack.repo, pack.clone_url, pack.branch)

    def scratch_dir(self, ticket_id: str) -> str:
        root = Path(self.workspace_root or default_workspace_root()) / "_scratch"
        path = ticket_dir(root, ticket_id)  # a hostile id never lands outside the root
        path.mkdir(parents=True, exist_ok=True)
        return str(path)

    # --- phases ------------------------------------------------------------------------------

    def fetch_ticket(self, key: str) -> Ticket:
        return intake.fetch_ticket(
            key, ticket_sources(self.linear_client(), self.slack_client(), self.ticket_sources())
        )

    def guess_repo(self, ticket: Ticket) -> RepoGuess:
        if not self.catalog_path:
            raise ConfigError("catalog_path is empty: set VERANDA_CATALOG to the repo catalog file")
        catalog = repo_detection.load_catalog(self.catalog_path)
        guess = repo_detection.detect_repo(ticket, catalog)
        if guess.decision == "proceed":
            guess = repo_confirmation.confirm_repo_guess(
                guess, ticket, catalog, self.agent(ticket), self.scratch_dir(ticket.id)
            )
        if guess.decision == "ask":
            text = guess.question or f"Which repository is {ticket.id} about?"
            comment_id = self.channel().post(ticket, text)
            guess = guess.model_copy(update={"question_comment_id": comment_id})
        return guess

    def build_context_pack(self, ticket: Ticket, guess: RepoGuess) -> ContextPack:
        if not guess.repo:
            raise InputError(f"ticket {ticket.id}: no repository was decided to pack")
        workspace = self.workspace(ticket.id, guess.repo)
        search: CodeSearch
        api_url, _, token = self._forge_settings()
        if token and self.forge_row().name != "github":
            search = self.forge_row().code_search(
                api_url, token, guess.repo, per_minute=self.code_search_per_minute
            )
        elif self.github_token:
            search = GitHubCodeSearch(
                self.github_api_url,
                self.github_token,
                guess.repo,
                per_minute=self.code_search_per_minute,
                budget=self.search_budget(),
            )
        else:
            search = LocalGitGrep(workspace.path)
        return context.build_context_pack(
            ticket, guess, workspace, search, self.agent(ticket), self._context_config()
        )

    def _context_config(self) -> context.ContextConfig:
        """The layer directories that are set; the rest keep the config's defaults."""
        return context.ContextConfig(
            runbooks_dir=self.runbooks_dir or None, hints_dir=self.hints_dir or None
        )

    def write_red_tests(self, ticket: Ticket, pack: ContextPack) -> RedTests:
        return work_red_tests.write_red_tests(
            ticket,
            pack,
            self.pack_workspace(ticket, pack),
            self.agent(ticket),
            validation_timeout_s=self.validation_timeout_s,
        )

    def implement(self, ticket: Ticket, pack: ContextPack, red: RedTests) -> Patch:
        return work_patch.implement(
            ticket,
            pack,
            red,
            self.pack_workspace(ticket, pack),
            self.agent(ticket),
            validation_timeout_s=self.validation_timeout_s,
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
        channel = self.channel()
        return work_pull_request.open_pull_request(
            ticket,
            pack,
            patch,
            self.pack_workspace(ticket, pack),
            self.forge(),
            lambda text: channel.post(ticket, text),
            earlier=earlier,
        )

    def review(self, ticket: Ticket, pack: ContextPack, pr: PullRequest) -> ReviewRounds:
        return work_review.review_rounds(
            ticket,
            pack,
            pr,
            self.pack_workspace(ticket, pack),
            self.agent(ticket),
            self.forge(),
            validation_timeout_s=self.validation_timeout_s,
        )

    def await_ci(
        self, ticket: Ticket, pack: ContextPack, pr: PullRequest, review: ReviewRounds
    ) -> CIOutcome:
        return work_ci.await_ci(
            ticket,
            pack,
            pr,
            review,
            self.pack_workspace(ticket, pack),
            self.agent(ticket),
            self.forge(),
            timeout_s=self.ci_wait_timeout_s,
        )

    def process_feedback(
        self, ticket: Ticket, pack: ContextPack, pr: PullRequest, previous: Feedback | None
    ) -> Feedback:
        return work_feedback.process_feedback(
            ticket,
            pack,
            pr,
            self.pack_workspace(ticket, pack),
            self.agent(ticket),
            self.forge(),
            previous,
            validation_timeout_s=self.validation_timeout_s,
        )
