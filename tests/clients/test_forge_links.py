"""Each forge's URL grammar, as repository detection reads it through the registered readers."""

from __future__ import annotations

import pytest

from veranda_dagster.clients.forge_links import github_link, gitlab_link
from veranda_dagster.clients.forges import link_readers as forge_link_readers
from veranda_dagster.domain.repo_evidence import RepoLink, link_readers


@pytest.mark.parametrize(
    ("url", "link"),
    [
        (
            "https://github.com/acme/billing/blob/main/x.py#L3",
            RepoLink("acme", "billing", "url_code"),
        ),
        ("https://github.com/acme/billing/pull/7", RepoLink("acme", "billing", "url_ref")),
        (
            "https://github.com/acme/billing/issues/7#issuecomment-1",
            RepoLink("acme", "billing", "url_comment"),
        ),
        (
            "https://raw.githubusercontent.com/acme/billing/main/x.py",
            RepoLink("acme", "billing", "url_code"),
        ),
        ("https://github.com/orgs/acme/people", None),
        ("https://gitlab.com/acme/billing", None),
    ],
)
def test_github_urls(url: str, link: RepoLink | None) -> None:
    assert github_link(url) == link


@pytest.mark.parametrize(
    ("url", "link"),
    [
        (
            "https://gitlab.com/acme/payments/ledger/-/blob/main/app.py#L10",
            RepoLink("acme/payments", "ledger", "url_code"),
        ),
        ("https://gitlab.com/acme/ledger", RepoLink("acme", "ledger", "url_code")),
        (
            "https://gitlab.com/acme/payments/ledger/-/merge_requests/4",
            RepoLink("acme/payments", "ledger", "url_ref"),
        ),
        (
            "https://gitlab.com/acme/ledger/-/issues/4#note_99",
            RepoLink("acme", "ledger", "url_comment"),
        ),
        ("https://gitlab.com/explore/projects", None),
        ("https://github.com/acme/ledger", None),
        (  # a self-managed instance: GitLab's own /-/ separator tells its links apart
            "https://git.acme.internal/acme/payments/ledger/-/blob/main/app.py",
            RepoLink("acme/payments", "ledger", "url_code"),
        ),
        ("https://git.acme.internal/acme/ledger", None),  # no separator: could be any forge
    ],
)
def test_gitlab_urls_keep_subgroups_in_the_owner(url: str, link: RepoLink | None) -> None:
    assert gitlab_link(url) == link


def test_the_package_registers_every_forge_reader_with_the_domain() -> None:
    assert {github_link, gitlab_link} == set(forge_link_readers())
    assert set(forge_link_readers()) <= set(link_readers())
