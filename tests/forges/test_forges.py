"""The forge table: each row builds a working ``Forge`` and ``CodeSearch``, and the domain's own
``open_pull_request`` phase runs unchanged on the GitLab row against the GitLab fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.domain.conftest import TICKET, build_project
from tests.domain.deliver.test_pull_request import _call, _patch
from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.forge_port import Forge
from veranda_dagster.domain.deliver.pull_request import open_pull_request
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.forges.gitlab.client import GitLabClient
from veranda_dagster.forges.gitlab.code_search import GitLabCodeSearch
from veranda_dagster.forges.registry import FORGES, forge_provider
from veranda_dagster.sim.gitlab_fake import GitLabFake

TOKEN = "glpat-forge-table-token-1"


def test_rows_build_their_own_clients_and_parse_their_own_urls():
    github, gitlab = forge_provider("github"), forge_provider(" GitLab ")
    assert isinstance(github.client("", "t"), GitHubClient)
    assert isinstance(gitlab.client("https://git.acme.io/gitlab", "t"), GitLabClient)
    search = gitlab.code_search("https://gitlab.com", "t", "acme/platform/billing", sha="a" * 40)
    assert isinstance(search, GitLabCodeSearch) and isinstance(search, CodeSearch)
    assert github.parse_pr_url("https://github.com/acme/billing/pull/12") == ("acme/billing", 12)
    assert gitlab.parse_pr_url(
        "https://gitlab.com/acme/platform/billing/-/merge_requests/7#note_1"
    ) == ("acme/platform/billing", 7)
    assert gitlab.parse_pr_url(
        "https://git.acme.io/gitlab/acme/billing/-/merge_requests/3", "https://git.acme.io/gitlab"
    ) == ("acme/billing", 3)
    assert gitlab.parse_pr_url("https://github.com/acme/billing/pull/12") is None
    assert github.parse_pr_url("https://gitlab.com/acme/billing/-/merge_requests/3") is None
    assert gitlab.clone_url("", "acme/platform/billing") == (
        "https://gitlab.com/acme/platform/billing.git"
    )
    assert {row.git_username for row in FORGES.values()} == {"x-access-token", "oauth2"}
    with pytest.raises(ConfigError, match="choose one of"):
        forge_provider("bitbucket")


def test_open_pull_request_phase_runs_on_the_gitlab_row(tmp_path: Path):
    project = build_project(tmp_path)
    git_root = tmp_path / "gitlab"
    (git_root / "acme").mkdir(parents=True)
    (git_root / "acme" / "app.git").symlink_to(project.forge_git)  # pack.repo is acme/app
    patch = _patch(project, [_call("implementer")])
    posted: list[str] = []
    with GitLabFake(git_root, token=TOKEN) as fake:
        forge = forge_provider("gitlab").client(fake.base_url, TOKEN)
        assert isinstance(forge, Forge)

        def post(text: str) -> str:  # idempotent, as the ticket channel is (by its marker)
            if text not in posted:
                posted.append(text)
            return str(posted.index(text))

        args = (TICKET, project.pack, patch, project.workspace, forge, post)
        pr = open_pull_request(*args)
        again = open_pull_request(*args)
        assert (again.number, again.url) == (pr.number, pr.url)
        assert len(fake.mrs["acme/app"]) == 1  # one merge request per branch
        mr = fake.mrs["acme/app"][pr.number]
        assert mr["source_branch"] == project.workspace.branch and mr["target_branch"] == "main"
        assert mr["description"] == pr.body and "What ran and why" in pr.body
        assert pr.url.endswith(f"/acme/app/-/merge_requests/{pr.number}")
        assert posted == [f"Opened a pull request: {pr.url}"]
