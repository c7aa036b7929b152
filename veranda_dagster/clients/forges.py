"""The forges the pipeline can use, one row each, and the one place a forge says everything
about itself: its client and code search, the hosted API and web bases, the username git sends
beside the token, its clone URL, the grammar of its pull/merge request URLs and of links to its
repositories, its settings' variable prefix (so its secret), its code-search rate and the shapes
of the tokens it issues.

A forge is chosen by name (``VERANDA_FORGE=github|gitlab``) and everything that differs between
forges is read from its row, so the work phases, which speak ``domain.core.forge_port.Forge`` and
``domain.context.code_search.CodeSearch``, never learn which one they talk to.
Derived from the rows:
the forge resource's settings and secret (``resources/forge.py``, and from it the Helm and README
checks), repository detection's link readers and the scrubber's token shapes (both registered
by the package ``__init__``). Adding a forge is its client modules plus one ``register_forge``
row here; ``register_forge`` refuses a row missing a piece
(``tests/clients/test_forge_declarations.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from veranda_dagster.clients.forge_links import github_link, gitlab_link
from veranda_dagster.clients.limits import GITHUB_CODE_SEARCH_PER_MINUTE
from veranda_dagster.clients.token_shapes import GITHUB_TOKENS, GITLAB_TOKENS
from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.core.bounds import FORGE_BLOB_SEARCH_PER_MINUTE
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.forge_port import Forge
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.domain.core.token_shape_check import shapes_problems
from veranda_dagster.domain.intake.catalog_builder import RepositoryListing
from veranda_dagster.domain.intake.repo_evidence import RepoLinkReader

_NAME = re.compile(r"[a-z][a-z0-9_]*")
_ENV_PREFIX = re.compile(r"[A-Z][A-Z0-9_]*")


@runtime_checkable
class ForgeClient(Forge, RepositoryListing, Protocol):
    """A forge client as the service holds it: the domain's ``Forge``, the repository listing
    a catalog is built from (``veranda catalog``), and ``close`` (a sensor closes its
    connection pool after each tick)."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class ForgeProvider:
    """Everything one forge declares about itself; every field is required (``missing_pieces``
    names the ones a row lacks)."""

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
    env_prefix: str
    """``<prefix>_API_URL``, ``<prefix>_GIT_BASE`` and ``<prefix>_TOKEN`` configure it."""
    search_per_minute: int
    """The hosted forge's code-search rate for one token (a self-managed instance sets its
    own with ``VERANDA_CODE_SEARCH_PER_MINUTE``)."""
    link_reader: RepoLinkReader
    """Which repository a link in a ticket points at, if it is one of this forge's."""
    token_shapes: tuple[TokenShape, ...]
    """The tokens it issues, so the scrubber masks them wherever they appear."""

    @property
    def token_env(self) -> str:
        """The variable holding the forge's token."""
        return f"{self.env_prefix}_TOKEN"

    @property
    def secret_env(self) -> tuple[str, ...]:
        """Environment variables that hold this forge's secrets (for the docs and Helm)."""
        return (self.token_env,)

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


FORGES: dict[str, ForgeProvider] = {}
"""The registered forges by name, filled by ``register_forge`` (the two rows below)."""


def missing_pieces(row: ForgeProvider) -> list[str]:
    """The pieces ``row`` lacks or gets wrong, by field name; ``[]`` for a complete row."""
    missing = [] if _NAME.fullmatch(row.name) else ["name"]
    missing += [
        name
        for name in ("default_api_url", "default_git_base")
        if not getattr(row, name).startswith(("https://", "http://"))
    ]
    missing += [] if row.git_username else ["git_username"]
    missing += [] if {"repo", "number"} <= set(row.pr_path.groupindex) else ["pr_path"]
    missing += [
        name for name in ("make_client", "make_code_search", "link_reader")
        if not callable(getattr(row, name))
    ]  # fmt: skip
    missing += [] if _ENV_PREFIX.fullmatch(row.env_prefix) else ["env_prefix"]
    missing += [] if row.search_per_minute > 0 else ["search_per_minute"]
    shapes_ok = row.token_shapes and all(
        re.fullmatch(shape.pattern, shape.sample) for shape in row.token_shapes
    )
    missing += shapes_problems(row.token_shapes)  # a SHA-matching shape blanks every SHA
    return missing if shapes_ok else [*missing, "token_shapes"]


def register_forge(row: ForgeProvider) -> ForgeProvider:
    """Add ``row`` to ``FORGES``; a row missing a piece, or a name already taken, is a
    ``ConfigError`` naming what is wrong, so an incomplete forge never half-works."""
    missing = missing_pieces(row)
    if missing:
        raise ConfigError(f"forge {row.name!r} is incomplete: {', '.join(missing)}")
    if row.name in FORGES:
        raise ConfigError(f"forge {row.name!r} is registered twice")
    FORGES[row.name] = row
    return row


register_forge(
    ForgeProvider(
        name="github",
        default_api_url="https://api.github.com",
        default_git_base="https://github.com",
        git_username="x-access-token",
        pr_path=re.compile(r"^/(?P<repo>[^/]+/[^/]+)/pull/(?P<number>\d+)(?:[/?#].*)?$"),
        make_client=_github_client,
        make_code_search=_github_search,
        env_prefix="GITHUB",
        search_per_minute=GITHUB_CODE_SEARCH_PER_MINUTE,
        link_reader=github_link,
        token_shapes=GITHUB_TOKENS,
    )
)
register_forge(
    ForgeProvider(
        name="gitlab",
        default_api_url="https://gitlab.com",
        default_git_base="https://gitlab.com",
        git_username="oauth2",
        pr_path=re.compile(
            r"^/(?P<repo>[^/]+(?:/[^/]+)+?)/-/merge_requests/(?P<number>\d+)(?:[/?#].*)?$"
        ),
        make_client=_gitlab_client,
        make_code_search=_gitlab_search,
        env_prefix="GITLAB",
        search_per_minute=FORGE_BLOB_SEARCH_PER_MINUTE,
        link_reader=gitlab_link,
        token_shapes=GITLAB_TOKENS,
    )
)


def link_readers() -> tuple[RepoLinkReader, ...]:
    """Every forge's URL reader, for repository detection (the package registers this)."""
    return tuple(row.link_reader for row in FORGES.values())


def forge_token_shapes() -> tuple[TokenShape, ...]:
    """Every forge's token shapes, for the scrubber."""
    return tuple(shape for row in FORGES.values() for shape in row.token_shapes)


def forge_provider(name: str) -> ForgeProvider:
    """The row for ``name``; a typo is a ``ConfigError`` naming the choices."""
    try:
        return FORGES[name.strip().lower()]
    except KeyError:
        raise ConfigError(
            f"VERANDA_FORGE={name!r} is not a known forge; choose one of {sorted(FORGES)}"
        ) from None
