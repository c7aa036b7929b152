"""Each forge's URL grammar, as repository detection reads it through the registered readers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from veranda_dagster.domain.intake.repo_evidence import RepoLink, link_readers
from veranda_dagster.forges.github.links import github_link
from veranda_dagster.forges.gitlab.links import gitlab_link
from veranda_dagster.forges.registry import FORGES
from veranda_dagster.forges.registry import link_readers as forge_link_readers

GH, GL, RAW = "https://github.com", "https://gitlab.com", "https://raw.githubusercontent.com"
SELF = "https://git.acme.internal"  # a self-managed GitLab
BILLING, LEDGER, SUB_LEDGER = "acme/billing", "acme/ledger", "acme/payments/ledger"


def link(repo: str, kind: str) -> RepoLink:
    """``owner/name`` (a GitLab owner keeps its subgroups) as the link a reader returns."""
    owner, _, name = repo.rpartition("/")
    return RepoLink(owner, name, kind)


@pytest.mark.parametrize(
    ("read", "url", "expected"),
    [
        (github_link, f"{GH}/{BILLING}/blob/main/x.py#L3", link(BILLING, "url_code")),
        (github_link, f"{GH}/{BILLING}/pull/7", link(BILLING, "url_ref")),
        (github_link, f"{GH}/{BILLING}/issues/7#issuecomment-1", link(BILLING, "url_comment")),
        (github_link, f"{RAW}/{BILLING}/main/x.py", link(BILLING, "url_code")),
        (github_link, f"{GH}/orgs/acme/people", None),
        (github_link, f"{GL}/{BILLING}", None),
        # GitLab keeps subgroups in the owner
        (gitlab_link, f"{GL}/{SUB_LEDGER}/-/blob/main/app.py#L10", link(SUB_LEDGER, "url_code")),
        (gitlab_link, f"{GL}/{LEDGER}", link(LEDGER, "url_code")),
        (gitlab_link, f"{GL}/{SUB_LEDGER}/-/merge_requests/4", link(SUB_LEDGER, "url_ref")),
        (gitlab_link, f"{GL}/{LEDGER}/-/issues/4#note_99", link(LEDGER, "url_comment")),
        (gitlab_link, f"{GL}/explore/projects", None),
        (gitlab_link, f"{GH}/{LEDGER}", None),
        # a self-managed instance: GitLab's own /-/ separator tells its links apart
        (gitlab_link, f"{SELF}/{SUB_LEDGER}/-/blob/main/app.py", link(SUB_LEDGER, "url_code")),
        (gitlab_link, f"{SELF}/{LEDGER}", None),  # no separator: could be any forge
    ],
)
def test_each_forge_reads_its_own_urls(
    read: Callable[[str], RepoLink | None], url: str, expected: RepoLink | None
) -> None:
    assert read(url) == expected


def test_every_forge_plugins_reader_is_registered_with_the_domain() -> None:
    assert {github_link, gitlab_link} <= set(forge_link_readers())
    assert set(forge_link_readers()) == {row.link_reader for row in FORGES.values()}
    assert set(forge_link_readers()) <= set(link_readers())
