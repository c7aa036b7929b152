"""Every link a fake hands out opens a page a person can read, with no credential: a pull or
merge request, a Linear issue, a Jira issue. Hostile text on them is shown, never rendered."""

from __future__ import annotations

import httpx
import pytest

from veranda_dagster.sim.github_fake import GitHubFake
from veranda_dagster.sim.gitlab_fake import GitLabFake
from veranda_dagster.sim.human_pages import MAX_PAGE_TEXT_CHARS, HumanPage, render
from veranda_dagster.sim.jira_fake import JiraFake
from veranda_dagster.sim.linear_fake import LinearFake
from veranda_dagster.sim.sample_org import BILLING, SampleOrg

HOSTILE = "<script>alert(1)</script>"


def opened(url: str) -> str:
    """What a browser gets for ``url``: a 200 HTML page (never the API's 401 JSON)."""
    response = httpx.get(url, timeout=10)
    assert response.status_code == 200, response.text[:300]
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def test_a_pull_request_url_opens_its_page_with_title_body_and_comments(
    sample_org: SampleOrg,
) -> None:
    with GitHubFake(sample_org.git_base, token="ghs_t") as gh:
        number = gh.fork_pull_request(BILLING, "mallory/billing", "fix", f"Body {HOSTILE}")
        gh.human_comment(BILLING, number, "Looks good, one nit")
        url = gh.all_pulls(BILLING)[0]["html_url"]
        page = opened(url)
        assert "<title>From a fork · Pull request acme/billing#1</title>" in page
        assert "Looks good, one nit" in page and "status: <b>open</b>" in page
        assert HOSTILE not in page and "&lt;script&gt;" in page
        assert httpx.get(f"{gh.base_url}/{BILLING}/pull/99").status_code == 404
        assert httpx.get(f"{gh.base_url}/repos/{BILLING}/pulls/1").status_code == 401  # API


def test_a_merge_request_url_opens_its_page(sample_org: SampleOrg) -> None:
    with GitLabFake(sample_org.git_base, token="glpat-t") as gl:
        iid = gl.fork_merge_request(BILLING, "veranda/pay-1", "the description")
        page = opened(f"{gl.base_url}/{BILLING}/-/merge_requests/{iid}")
        assert "the description" in page and "status: <b>opened</b>" in page
        assert f"Merge request acme/billing!{iid}" in page and "veranda/pay-1" in page


def test_a_linear_issue_url_points_at_the_fake_and_opens_there() -> None:
    with LinearFake(token="lin_api_t") as linear:
        issue = linear.file_ticket(f"Fix the retry bug {HOSTILE}", "repo: acme/billing")
        linear.add_comment(issue["identifier"], "Opened a pull request: http://x/pull/1")
        assert issue["url"].startswith(linear.base_url + "/")  # not linear.app, offline
        page = opened(issue["url"])
        assert f"Issue {issue['identifier']}" in page and "repo: acme/billing" in page
        assert "Opened a pull request" in page and HOSTILE not in page
        assert httpx.get(f"{linear.base_url}/acme/issue/ENG-999").status_code == 404


def test_a_jira_browse_url_opens_its_page() -> None:
    with JiraFake("tok") as jira:
        jira.file_issue("PAY-7", "Refunds round down", "details", labels=["veranda"])
        jira.add_comment("PAY-7", "on it")
        page = opened(f"{jira.base_url}/browse/PAY-7")
        assert "Refunds round down" in page and "on it" in page


@pytest.mark.parametrize("size", [MAX_PAGE_TEXT_CHARS + 1, 10 * MAX_PAGE_TEXT_CHARS])
def test_a_huge_body_is_cut_at_the_page_bound(size: int) -> None:
    page = render(HumanPage("Issue", "t", "open", "x" * size, "fake"))
    assert "x" * MAX_PAGE_TEXT_CHARS in page and "x" * (MAX_PAGE_TEXT_CHARS + 1) not in page
    assert "… (cut)" in page
