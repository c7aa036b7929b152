"""The forges the pipeline can use, one row each: client, code search, clone URL, git user,
and the grammar of a pull/merge request URL.

A forge is chosen by name (``VERANDA_FORGE=github|gitlab``) and everything that differs between
forges is read from its row, so the work phases, which speak ``domain.work.forge.Forge`` and
``domain.code_search.CodeSearch``, never learn which one they talk to. Adding a forge is a row
here plus its client modules; nothing that calls ``forge_provider`` changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from veranda_dagster.clients.limits import GITHUB_CODE_SEARCH_PER_MINUTE
from veranda_dagster.domain.bounds import FORGE_BLOB_SEARCH_PER_MINUTE
from veranda_dagster.domain.code_search import CodeSearch
from veranda_dagster.domain.errors import ConfigError
from veranda_dagster.domain.work.forge import Forge


class ForgeClient(Forge, Protocol):
    """A forge client as the service holds it: the domain's ``Forge`` plus ``close`` (a sensor
    closes its connection pool after each tick)."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class ForgeProvider:
    name: str
    default_api_url: str
    default_git_base: str
    git_username: str
    """The username sent beside the token over https (askpass answers it)."""
    pr_path: re.Pattern[str]
    """A pull/merge request's web path (after the host or the instance's relative root), with
    groups ``repo`` and ``number``."""
    make_client: Callable[[str, str | None], ForgeClient]
    make_code_search: Callable[..., CodeSearch]
    secret_env: tuple[str, ...]
    """Environment variables that hold this forge's secrets (for the docs and Helm checks)."""
    env_prefix: str
    """``<prefix>_API_URL``, ``<prefix>_GIT_BASE`` and ``<prefix>_TOKEN`` configure it."""
    search_per_minute: int
    """The hosted forge's code-search rate for one token (a self-managed instance sets its
    own with ``VERANDA_CODE_SEARCH_PER_MINUTE``)."""

    def client(self, api_url: str, token: str | None) -> ForgeClient:
        return self.make_client(api_url or self.default_api_url, token)

    def code_search(self, api_url: str, token: str | None, repo: str, **kw: Any) -> CodeSearch:
        return self.make_code_search(api_url or self.default_api_url, token, repo, **kw)

    def clone_url(self, git_base: str, repo: str) -> str:
        """``<git_base>/<repo>.git``: https for a real forge, a directory in the simulation."""
        return f"{(git_base or self.default_git_base).rstrip('/')}/{repo}.git"

    def parse_pr_url(self, url: str, web_base: str = "") -> tuple[str, int] | None:
        """``(repo, number)`` of a pull/merge request URL; ``web_base`` (a self-managed
        instance under a relative root, ``https://git.acme.io/gitlab``) is cut off first."""
        url = url.strip()
        base = web_base.rstrip("/")
        if base and url.startswith(base + "/"):
            path = url[len(base) :]
        else:
            path = re.sub(r"^https?://[^/]+", "", url)
        match = self.pr_path.match(path)
        return (match.group("repo"), int(match.group("number"))) if match else None


def _github_client(api_url: str, token: str | None) -> ForgeClient:
    from veranda_dagster.clients.github import GitHubClient

    return GitHubClient(api_url, token)


def _github_search(api_url: str, token: str | None, repo: str, **kw: Any) -> CodeSearch:
    from veranda_dagster.clients.github_code_search import GitHubCodeSearch

    return GitHubCodeSearch(api_url, token, repo, **kw)


def _gitlab_client(api_url: str, token: str | None) -> ForgeClient:
    from veranda_dagster.clients.gitlab import GitLabClient

    return GitLabClient(api_url, token)


def _gitlab_search(api_url: str, token: str | None, repo: str, **kw: Any) -> CodeSearch:
    from veranda_dagster.clients.gitlab_code_search import GitLabCodeSearch

    return GitLabCodeSearch(api_url, token, repo, **kw)


FORGES: dict[str, ForgeProvider] = {
    "github": ForgeProvider(
        name="github",
        default_api_url="https://api.github.com",
        default_git_base="https://github.com",
        git_username="x-access-token",
        pr_path=re.compile(r"^/(?P<repo>[^/]+/[^/]+)/pull/(?P<number>\d+)(?:[/?#].*)?$"),
        make_client=_github_client,
        make_code_search=_github_search,
        secret_env=("GITHUB_TOKEN",),
        env_prefix="GITHUB",
        search_per_minute=GITHUB_CODE_SEARCH_PER_MINUTE,
    ),
    "gitlab": ForgeProvider(
        name="gitlab",
        default_api_url="https://gitlab.com",
        default_git_base="https://gitlab.com",
        git_username="oauth2",
        pr_path=re.compile(
            r"^/(?P<repo>[^/]+(?:/[^/]+)+?)/-/merge_requests/(?P<number>\d+)(?:[/?#].*)?$"
        ),
        make_client=_gitlab_client,
        make_code_search=_gitlab_search,
        secret_env=("GITLAB_TOKEN",),
        env_prefix="GITLAB",
        search_per_minute=FORGE_BLOB_SEARCH_PER_MINUTE,
    ),
}


def forge_provider(name: str) -> ForgeProvider:
    """The row for ``name``; a typo is a ``ConfigError`` naming the choices."""
    try:
        return FORGES[name.strip().lower()]
    except KeyError:
        raise ConfigError(
            f"VERANDA_FORGE={name!r} is not a known forge; choose one of {sorted(FORGES)}"
        ) from None
