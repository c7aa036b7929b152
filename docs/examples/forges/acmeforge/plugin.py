"""Acme Forge, declared: a self-hosted forge that serves GitHub's REST API (as GitHub
Enterprise Server and several GitHub-compatible forges do), so it reuses GitHub's client and code
search and declares only what differs: its URLs, the grammar of its change requests and links,
its settings' prefix (``ACMEFORGE_API_URL``, ``ACMEFORGE_GIT_BASE``, ``ACMEFORGE_TOKEN``), its
search rate and its token shape. A forge with an API of its own brings its own ``client.py``
(the ``Forge`` port of ``domain/core/forge_port.py``) and ``code_search.py`` beside this file.
"""

from __future__ import annotations

import re
from typing import Any

from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.forges.github.code_search import GitHubCodeSearch
from veranda_dagster.forges.registry import ForgeClient, ForgeProvider

from .links import acmeforge_link

SEARCH_PER_MINUTE = 30
"""Acme Forge's documented code-search rate for one token (made up for the example)."""

TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "acmeforge",
        r"acf_[A-Za-z0-9]{24,}",
        "acf_" + "k3Yq" * 6,
        "made up for this example: cite the forge's token-format docs for a real one",
    ),
)


def client(api_url: str, token: str | None) -> ForgeClient:
    return GitHubClient(api_url, token)


def code_search(api_url: str, token: str | None, repo: str, **kw: Any) -> CodeSearch:
    return GitHubCodeSearch(api_url, token, repo, **kw)


PLUGIN = ForgeProvider(
    name="acmeforge",
    default_api_url="https://code.acme.test/api/v3",
    default_git_base="https://code.acme.test",
    git_username="x-access-token",
    pr_path=re.compile(r"^/(?P<repo>[^/]+/[^/]+)/changes/(?P<number>\d+)(?:[/?#].*)?$"),
    make_client=client,
    make_code_search=code_search,
    env_prefix="ACMEFORGE",
    search_per_minute=SEARCH_PER_MINUTE,
    link_reader=acmeforge_link,
    token_shapes=TOKENS,
)
