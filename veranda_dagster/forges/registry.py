"""The forges the pipeline can use, one plugin folder each (``forges/<name>/``), and the shape
every forge declares in its ``plugin.py``: its client and code search, the hosted API and web
bases, the username git sends beside the token, its clone URL, the grammar of its pull/merge
request URLs and of links to its repositories, its settings' variable prefix (so its secret),
its code-search rate and the shapes of the tokens it issues.

A forge is chosen by name (``VERANDA_FORGE=github|gitlab``) and everything that differs between
forges is read from its declaration, so the work phases, which speak
``domain.core.forge_port.Forge`` and ``domain.context.code_search.CodeSearch``, never learn which
one they talk to. Derived from the declarations: the forge resource's settings and secret
(``resources/forge.py``, and from it the Helm and docs checks), repository detection's link
readers and the scrubber's token shapes (both handed to the domain by ``plugins.load_plugins``).
Adding a forge is one folder; ``FORGES`` refuses a declaration missing a piece.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.forge_port import Forge
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.domain.core.token_shape_check import shapes_problems
from veranda_dagster.domain.intake.catalog_builder import RepositoryListing
from veranda_dagster.domain.intake.repo_evidence import RepoLinkReader
from veranda_dagster.registry import Registry

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


FORGES: Registry[ForgeProvider] = Registry(
    "forge", "veranda_dagster.forges", name_of=lambda row: row.name, missing_pieces=missing_pieces
)
"""The forges by name: each folder of ``forges/`` whose ``plugin.py`` declares ``PLUGIN``."""


def link_readers() -> tuple[RepoLinkReader, ...]:
    """Every forge's URL reader, for repository detection."""
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
