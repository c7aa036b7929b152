"""``ForgeResource``: the one binding of the forge token, shared by the ``pr_feedback`` sensor
and the phases that clone, push, open the pull/merge request, read CI and reply to comments.

The forge is chosen by ``VERANDA_FORGE=github|gitlab`` (default ``github``) and everything that
differs between forges comes from its declaration (``forges/<name>/plugin.py``): the client,
the code-search index, the clone URL, the username git sends beside the token, and the
grammar of a PR/MR URL. Settings are read from its variables:
``GITHUB_API_URL``/``GITHUB_GIT_BASE``/
``GITHUB_TOKEN`` or ``GITLAB_API_URL``/``GITLAB_GIT_BASE``/``GITLAB_TOKEN``; an empty URL
means the row's hosted default (``https://api.github.com``, ``https://gitlab.com``).

With an orgs file (``VERANDA_ORGS``, ``domain.core.orgs``) each listed org gets its own connection:
its forge's row, its URLs (else the row's variables), and its token from the variable the file
names (else the row's). ``for_repo`` is the connection of a repository's org (the default one
outside every listed org), and ``client`` routes each call by the repository it names, so the
phases and the PR-feedback sensor hold one client whatever mix of forges the orgs use.
"""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg
from pydantic import Field

from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.orgs import OrgsConfig, OrgSettings, org_of
from veranda_dagster.forges.registry import FORGES, ForgeClient, ForgeProvider, forge_provider
from veranda_dagster.forges.routed import RoutedForge
from veranda_dagster.resources.orgs import orgs_from_env
from veranda_dagster.settings import env_number, secret, setting
from veranda_dagster.storage.search_budget import BudgetState, SearchBudget, budget_key

FORGE_ENV = "VERANDA_FORGE"
DEFAULT_FORGE = "github"
SECRET_ENV = tuple(name for row in FORGES.values() for name in row.secret_env)
"""Every forge row's token variable: a deployment exports all, ``VERANDA_FORGE`` picks one."""


def requested_forge(environ: Mapping[str, str] | None = None) -> str:
    """``VERANDA_FORGE`` as written (trimmed, lowercased; the default when unset): the one
    reading, refused by ``forge_provider`` where the resource is built when it names no row."""
    return setting(FORGE_ENV, DEFAULT_FORGE, environ).strip().lower() or DEFAULT_FORGE


def requested_forges(environ: Mapping[str, str] | None = None) -> list[str]:
    """``requested_forge`` and every forge the orgs file names, as written, for display (the
    UI's kind icons): an orgs file that does not load adds nothing here and is refused where
    the resources are built."""
    try:
        orgs = orgs_from_env(environ)
    except ConfigError:
        orgs = None
    return list(dict.fromkeys([requested_forge(environ), *(orgs.forges() if orgs else [])]))


class OrgForge(dg.Config):
    """One org's forge connection from the orgs file; its token arrives through ``dg.EnvVar``."""

    org: str
    forge: str
    api_url: str = ""
    git_base: str = ""
    token: str | None = Field(default=None, repr=False)
    token_variable: str = ""
    """The variable the token is read from (named in errors, never the value)."""

    @classmethod
    def from_settings(cls, org: OrgSettings, environ: Mapping[str, str] | None) -> OrgForge:
        row = forge_provider(org.forge)
        prefix, variable = row.env_prefix, org.token_env or row.token_env
        return cls(
            org=org.name,
            forge=row.name,
            api_url=org.api_url or setting(f"{prefix}_API_URL", "", environ),
            git_base=org.git_base or setting(f"{prefix}_GIT_BASE", "", environ),
            token=secret(variable, environ),
            token_variable=variable,
        )


class ForgeResource(Resource):
    """One forge's connection settings (and, with an orgs file, one per org); tokens arrive
    through ``dg.EnvVar``."""

    forge: str = DEFAULT_FORGE
    """The forge in ``forges.registry.FORGES`` (``github`` or ``gitlab``)."""
    api_url: str = ""
    """REST base URL; empty = the row's hosted default."""
    git_base: str = ""
    """Where clones come from: ``<git_base>/<repo>.git`` (a local dir in the simulation);
    empty = the row's hosted default. Also the web base a PR/MR URL is read against."""
    token: str | None = Field(default=None, repr=False)
    code_search_per_minute: int = 0
    """The token's code-search rate; 0 = the row's hosted rate (GitHub 10/min, GitLab 30/min)."""
    token_variable: str = ""
    """Where the token is read from when not the row's own variable (an org's ``token_env``)."""
    orgs: list[OrgForge] = Field(default_factory=list)
    """Each listed org's own connection; repositories outside them use the fields above."""

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        forge: str | None = None,
        orgs: OrgsConfig | None = None,
    ) -> ForgeResource:
        """The forge named by ``forge`` or ``VERANDA_FORGE``, from its row's variables, plus one
        connection per org of ``orgs``; a forge name that is not a row is a ``ConfigError`` at
        load, naming the choices."""
        row = forge_provider(forge or requested_forge(environ))
        prefix = row.env_prefix
        rate = env_number("VERANDA_CODE_SEARCH_PER_MINUTE", 0, int, allow_zero=True)
        return cls(
            forge=row.name,
            api_url=setting(f"{prefix}_API_URL", "", environ),
            git_base=setting(f"{prefix}_GIT_BASE", "", environ),
            token=secret(row.token_env, environ),
            code_search_per_minute=rate,
            orgs=[OrgForge.from_settings(org, environ) for org in (orgs.orgs if orgs else [])],
        )

    def for_repo(self, repo: str) -> ForgeResource:
        """The connection of ``repo``'s org: its own when the orgs file lists the org, else
        this resource's default forge."""
        return self.for_owner(repo)

    def for_owner(self, owner: str) -> ForgeResource:
        """The connection of the org ``owner`` (``acme`` or ``acme/platform``) is in."""
        org = next((o for o in self.orgs if o.org.lower() == org_of(owner)), None)
        return self._default() if org is None else self._of(org)

    def connections(self) -> list[ForgeResource]:
        """The default connection, then each org's, each with no orgs of its own."""
        return [self._default(), *(self._of(org) for org in self.orgs)]

    def _default(self) -> ForgeResource:
        return self._of(self) if self.orgs else self

    def _of(self, org: OrgForge | ForgeResource) -> ForgeResource:
        """One connection alone: ``org``'s forge, URLs and token, this resource's search rate."""
        return ForgeResource(
            forge=org.forge,
            api_url=org.api_url,
            git_base=org.git_base,
            token=org.token,
            code_search_per_minute=self.code_search_per_minute,
            token_variable=org.token_variable,
        )

    @property
    def provider(self) -> ForgeProvider:
        return forge_provider(self.forge)

    @property
    def configured(self) -> bool:
        """A token is set for the default forge or for any listed org."""
        return bool(self.token) or any(org.token for org in self.orgs)

    @property
    def token_env(self) -> str:
        """The variable an operator sets to configure this forge (for error messages)."""
        return self.token_variable or self.provider.token_env

    @property
    def git_username(self) -> str:
        return self.provider.git_username

    @property
    def search_per_minute(self) -> int:
        return self.code_search_per_minute or self.provider.search_per_minute

    def client(self) -> ForgeClient:
        """This forge's client; with orgs listed, one that routes each call to the client of
        the org its repository is in."""
        own = self.provider.client(self.api_url, self.token or None)
        if not self.orgs:
            return own
        return RoutedForge(own, {org.org: self._of(org).client() for org in self.orgs})

    def clone_url(self, repo: str) -> str:
        if not (self.git_base or self.provider.default_git_base):
            raise ConfigError(f"{self.provider.env_prefix}_GIT_BASE is empty")
        return self.provider.clone_url(self.git_base, repo)

    def parse_pr_url(self, url: str) -> tuple[str, int] | None:
        """``(repo, number)`` of a PR/MR URL of this forge or of any listed org's, else
        ``None``."""
        if self.orgs:
            return next((hit for c in self.connections() if (hit := c.parse_pr_url(url))), None)
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
