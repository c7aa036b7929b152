"""``ForgeResource``: the one binding of the forge token, shared by the ``pr_feedback`` sensor
and the phases that clone, push, open the pull/merge request, read CI and reply to comments.

The forge is chosen by ``VERANDA_FORGE=github|gitlab`` (default ``github``) and everything that
differs between forges comes from its row in ``clients.forges``: the client, the code-search
backend, the clone URL, the username git sends beside the token, and the grammar of a PR/MR
URL. Settings are read from the row's variables: ``GITHUB_API_URL``/``GITHUB_GIT_BASE``/
``GITHUB_TOKEN`` or ``GITLAB_API_URL``/``GITLAB_GIT_BASE``/``GITLAB_TOKEN``; an empty URL
means the row's hosted default (``https://api.github.com``, ``https://gitlab.com``).
"""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg
from pydantic import Field

from veranda_dagster.clients.forges import FORGES, ForgeClient, ForgeProvider, forge_provider
from veranda_dagster.domain.code_search import CodeSearch
from veranda_dagster.domain.errors import ConfigError
from veranda_dagster.resources._env import secret, setting
from veranda_dagster.settings import env_number
from veranda_dagster.storage.search_budget import BudgetState, SearchBudget, budget_key

FORGE_ENV = "VERANDA_FORGE"
DEFAULT_FORGE = "github"
SECRET_ENV = tuple(name for row in FORGES.values() for name in row.secret_env)
"""Every forge row's token variable: a deployment exports all, ``VERANDA_FORGE`` picks one."""


class ForgeResource(dg.ConfigurableResource):
    """One forge's connection settings; the token arrives through ``dg.EnvVar``."""

    forge: str = DEFAULT_FORGE
    """The row in ``clients.forges.FORGES`` (``github`` or ``gitlab``)."""
    api_url: str = ""
    """REST base URL; empty = the row's hosted default."""
    git_base: str = ""
    """Where clones come from: ``<git_base>/<repo>.git`` (a local dir in the simulation);
    empty = the row's hosted default. Also the web base a PR/MR URL is read against."""
    token: str | None = Field(default=None, repr=False)
    code_search_per_minute: int = 0
    """The token's code-search rate; 0 = the row's hosted rate (GitHub 10/min, GitLab 30/min)."""

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, forge: str | None = None
    ) -> ForgeResource:
        """The forge named by ``forge`` or ``VERANDA_FORGE``, from its row's variables; a
        forge name that is not a row is a ``ConfigError`` at load, naming the choices."""
        row = forge_provider(forge or setting(FORGE_ENV, DEFAULT_FORGE, environ))
        prefix = row.env_prefix
        rate = env_number("VERANDA_CODE_SEARCH_PER_MINUTE", 0, int, allow_zero=True)
        return cls(
            forge=row.name,
            api_url=setting(f"{prefix}_API_URL", "", environ),
            git_base=setting(f"{prefix}_GIT_BASE", "", environ),
            token=secret(row.token_env, environ),
            code_search_per_minute=rate,
        )

    @property
    def provider(self) -> ForgeProvider:
        return forge_provider(self.forge)

    @property
    def configured(self) -> bool:
        return bool(self.token)

    @property
    def token_env(self) -> str:
        """The variable an operator sets to configure this forge (for error messages)."""
        return self.provider.token_env

    @property
    def git_username(self) -> str:
        return self.provider.git_username

    @property
    def search_per_minute(self) -> int:
        return self.code_search_per_minute or self.provider.search_per_minute

    def client(self) -> ForgeClient:
        return self.provider.client(self.api_url, self.token or None)

    def clone_url(self, repo: str) -> str:
        if not (self.git_base or self.provider.default_git_base):
            raise ConfigError(f"{self.provider.env_prefix}_GIT_BASE is empty")
        return self.provider.clone_url(self.git_base, repo)

    def parse_pr_url(self, url: str) -> tuple[str, int] | None:
        """``(repo, number)`` of one of this forge's PR/MR URLs, else ``None``."""
        return self.provider.parse_pr_url(url, self.git_base)

    def search_budget(self, state: BudgetState) -> SearchBudget:
        """The token's one code-search budget, kept in ``state`` so every run holding the token
        on this deployment draws from it (concurrent packs and retried steps included)."""
        api_url = self.api_url or self.provider.default_api_url
        return SearchBudget(state, budget_key(api_url, self.token or ""), self.search_per_minute)

    def code_search(self, repo: str, state: BudgetState) -> CodeSearch:
        """The forge's remote code search over ``repo``, spending the shared budget."""
        return self.provider.code_search(
            self.api_url,
            self.token or None,
            repo,
            per_minute=self.search_per_minute,
            budget=self.search_budget(state),
        )
