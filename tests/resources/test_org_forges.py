"""One forge connection per org: chosen by the repository's org, routed call by call."""

from __future__ import annotations

import dagster as dg
import pytest

from veranda_dagster.domain.core.forge_port import CiJob, Comment
from veranda_dagster.domain.core.orgs import parse_orgs
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.forges.gitlab.client import GitLabClient
from veranda_dagster.forges.routed import RoutedForge
from veranda_dagster.resources.forge import ForgeResource

ORGS = parse_orgs(
    {
        "orgs": [
            {"name": "acme", "forge": "github", "sources": ["linear"], "catalog": "a.yaml"},
            {
                "name": "acme-data",
                "forge": "gitlab",
                "api_url": "https://git.acme.io/gitlab",
                "git_base": "https://git.acme.io/gitlab",
                "token_env": "GITLAB_TOKEN_DATA",
                "sources": ["jira"],
                "catalog": "d.yaml",
            },
        ]
    },
    "orgs",
)
ENV = {"GITHUB_TOKEN": "ghp-default", "GITLAB_TOKEN_DATA": "glpat-data"}


def _resource(env: dict[str, str] = ENV) -> ForgeResource:
    return ForgeResource.from_env(env, forge="github", orgs=ORGS)


def test_each_org_gets_its_forge_urls_and_its_own_token_variable():
    forge = _resource()
    data = forge.for_repo("acme-data/platform/pipeline")
    assert (data.forge, data.api_url, data.token_env) == (
        "gitlab",
        "https://git.acme.io/gitlab",
        "GITLAB_TOKEN_DATA",
    )
    assert data.git_username == "oauth2"
    assert data.clone_url("acme-data/platform/pipeline") == (
        "https://git.acme.io/gitlab/acme-data/platform/pipeline.git"
    )
    acme = forge.for_repo("acme/billing")
    assert (acme.forge, acme.token_env, acme.git_username) == (
        "github",
        "GITHUB_TOKEN",
        "x-access-token",
    )
    assert forge.for_repo("elsewhere/x").forge == "github"  # outside every org: the default
    assert forge.for_repo("acme-datawarehouse/x").forge == "github"  # a prefix is not the org
    assert [c.forge for c in forge.connections()] == ["github", "github", "gitlab"]


def test_tokens_are_bound_by_variable_name_and_never_shown():
    forge = _resource()
    shown = repr(forge)
    assert "glpat-data" not in shown and "ghp-default" not in shown
    assert isinstance(forge.orgs[1].token, dg.EnvVar) or forge.orgs[1].token == "GITLAB_TOKEN_DATA"
    unset = _resource({"GITHUB_TOKEN": "ghp-default"}).for_repo("acme-data/x")
    assert not unset.configured and unset.token_env == "GITLAB_TOKEN_DATA"
    assert _resource({"GITLAB_TOKEN_DATA": "glpat"}).configured  # any org's token will do


def test_pull_and_merge_request_urls_of_every_org_are_read():
    forge = _resource()
    assert forge.parse_pr_url("https://github.com/acme/billing/pull/7") == ("acme/billing", 7)
    assert forge.parse_pr_url(
        "https://git.acme.io/gitlab/acme-data/platform/pipeline/-/merge_requests/4"
    ) == ("acme-data/platform/pipeline", 4)
    assert forge.parse_pr_url("https://example.com/nothing") is None


def test_the_client_routes_each_org_to_its_own_forge_client():
    client = _resource().client()
    try:
        assert isinstance(client, RoutedForge)
        assert isinstance(client.for_owner("acme-data/platform"), GitLabClient)
        assert isinstance(client.for_owner("acme"), GitHubClient)
        assert isinstance(client.for_owner("someone-else"), GitHubClient)
    finally:
        client.close()
    plain = ForgeResource.from_env(ENV, forge="github").client()
    assert isinstance(plain, GitHubClient)
    plain.close()


@pytest.mark.parametrize(
    "path", ["acme-data/platform/pipeline", "ACME-Data/x", "/acme-data/x/", "acme/billing", "x/y"]
)
def test_the_clone_token_and_the_api_calls_go_to_the_same_org(path: str):
    """``for_repo`` picks the clone's forge and token, the routed client the API calls'; one
    rule serves both, so a repository never pushes with one org's token and opens its pull
    request with another's."""
    forge = _resource()
    client = forge.client()
    try:
        expected = GitLabClient if forge.for_repo(path).forge == "gitlab" else GitHubClient
        assert isinstance(client.for_owner(path), expected)  # type: ignore[attr-defined]
    finally:
        client.close()


class _Recording:
    def __init__(self, name: str) -> None:
        self.name, self.closed = name, 0
        self.calls: list[tuple[str, tuple[object, ...]]] = []

    def __getattr__(self, method: str):
        if method.startswith("_"):
            raise AttributeError(method)

        def record(*args: object) -> str:
            self.calls.append((method, args))
            return self.name

        return record

    def close(self) -> None:
        self.closed += 1


@pytest.mark.parametrize(
    ("method", "args"),
    [
        ("find_pull_request", ("{repo}", "veranda/T-1")),
        ("create_pull_request", ("{repo}", "head", "main", "t", "b")),
        ("update_pull_request_body", ("{repo}", 3, "b")),
        ("list_ci_jobs", ("{repo}", "abc")),
        ("ci_findings", ("{repo}", CiJob(id="1", name="lint", state="failed"))),
        ("ci_job_report", ("{repo}", CiJob(id="1", name="lint", state="failed"))),
        ("ci_job_log_tail", ("{repo}", CiJob(id="1", name="lint", state="failed"))),
        ("list_comments", ("{repo}", 3)),
        ("comment", ("{repo}", 3, "hi")),
        ("reply", ("{repo}", 3, Comment(id="note:1", author="a", body="b"), "hi")),
    ],
)
def test_every_port_operation_goes_to_the_repositorys_org(method, args):
    default, data = _Recording("default"), _Recording("data")
    routed = RoutedForge(default, {"acme-data": data})  # type: ignore[arg-type]
    for repo, expected in [("acme-data/platform/pipeline", data), ("acme/billing", default)]:
        call = [repo if a == "{repo}" else a for a in args]
        answer = getattr(routed, method)(*call)
        assert expected.calls[-1] == (method, tuple(call))
        assert answer == (None if method == "update_pull_request_body" else expected.name)
    routed.close()
    assert (default.closed, data.closed) == (1, 1)
