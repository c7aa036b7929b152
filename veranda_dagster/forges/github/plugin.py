"""GitHub, declared: everything the pipeline reads of a forge, in one ``ForgeProvider``."""

from __future__ import annotations

import re
from typing import Any

from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.forges.github.code_search import GitHubCodeSearch
from veranda_dagster.forges.github.limits import GITHUB_CODE_SEARCH_PER_MINUTE
from veranda_dagster.forges.github.links import github_link
from veranda_dagster.forges.registry import ForgeClient, ForgeProvider

TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "github",
        r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{16,}",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "GitHub docs, 'About authentication to GitHub: GitHub's token formats'",
    ),
    TokenShape(
        "github_fine_grained",
        r"github_pat_[A-Za-z0-9_]{20,}",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "GitHub docs, token formats (fine-grained personal access tokens)",
    ),
)
"""GitHub's token formats, so the scrubber masks them wherever they appear."""


def client(api_url: str, token: str | None) -> ForgeClient:
    return GitHubClient(api_url, token)


def code_search(api_url: str, token: str | None, repo: str, **kw: Any) -> CodeSearch:
    return GitHubCodeSearch(api_url, token, repo, **kw)


PLUGIN = ForgeProvider(
    name="github",
    default_api_url="https://api.github.com",
    default_git_base="https://github.com",
    git_username="x-access-token",
    pr_path=re.compile(r"^/(?P<repo>[^/]+/[^/]+)/pull/(?P<number>\d+)(?:[/?#].*)?$"),
    make_client=client,
    make_code_search=code_search,
    env_prefix="GITHUB",
    search_per_minute=GITHUB_CODE_SEARCH_PER_MINUTE,
    link_reader=github_link,
    token_shapes=TOKENS,
)
