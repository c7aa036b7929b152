"""GitLab (gitlab.com or a self-managed instance), declared: everything the pipeline reads of a
forge, in one ``ForgeProvider``."""

from __future__ import annotations

import re
from typing import Any

from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.core.bounds import FORGE_BLOB_SEARCH_PER_MINUTE
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.forges.gitlab.client import GitLabClient
from veranda_dagster.forges.gitlab.code_search import GitLabCodeSearch
from veranda_dagster.forges.gitlab.links import gitlab_link
from veranda_dagster.forges.registry import ForgeClient, ForgeProvider

TOKENS: tuple[TokenShape, ...] = (
    TokenShape(
        "gitlab",
        r"gl(?:pat|dt|oas|rt|ptt|cbt|ft)-[A-Za-z0-9_.-]{20,}",
        "glpat-z_sxgtrfAxKr8q1TPY8Y.01.0abc12",
        "GitLab docs, 'Token prefixes' (glpat- personal, gldt- deploy, gloas- OAuth secret, "
        "glrt- runner, glptt- trigger, glcbt- CI job, glft- feed); newer PATs carry '.' parts",
    ),
)
"""GitLab's token prefixes, so the scrubber masks them wherever they appear."""


def client(api_url: str, token: str | None) -> ForgeClient:
    return GitLabClient(api_url, token)


def code_search(api_url: str, token: str | None, repo: str, **kw: Any) -> CodeSearch:
    return GitLabCodeSearch(api_url, token, repo, **kw)


PLUGIN = ForgeProvider(
    name="gitlab",
    default_api_url="https://gitlab.com",
    default_git_base="https://gitlab.com",
    git_username="oauth2",
    pr_path=re.compile(
        r"^/(?P<repo>[^/]+(?:/[^/]+)+?)/-/merge_requests/(?P<number>\d+)(?:[/?#].*)?$"
    ),
    make_client=client,
    make_code_search=code_search,
    env_prefix="GITLAB",
    search_per_minute=FORGE_BLOB_SEARCH_PER_MINUTE,
    link_reader=gitlab_link,
    token_shapes=TOKENS,
)
