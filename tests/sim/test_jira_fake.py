"""The Jira fake, as Cloud and as Data Center, driven by the product's JiraClient."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.sim.jira_fake import BOT_ACCOUNT_ID, JiraFake
from veranda_dagster.sim.jira_jql import JqlError, jql_match
from veranda_dagster.sources.jira.client import JiraClient, JiraNotFoundError

TOKEN = "ATATT3xFfGF0-fake-jira-token"
T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def seed(fake: JiraFake, assignee: str) -> None:
    fake.file_issue("PAY-1", "Old", labels=["veranda"], updated=T0)
    fake.file_issue(
        "PAY-2",
        "Rounding",
        "Totals off by one cent.",
        labels=["veranda"],
        attachments=[("trace.log", "text/plain")],
        updated=T0 + timedelta(hours=1),
    )
    fake.file_issue("PAY-3", "Assigned", assignee=assignee, updated=T0 + timedelta(hours=2))
    fake.file_issue("PAY-4", "Not ours", labels=["frontend"], updated=T0 + timedelta(hours=3))
    fake.file_issue(
        "PAY-5",
        "Done already",
        labels=["veranda"],
        category="done",
        updated=T0 + timedelta(hours=4),
    )


@pytest.mark.parametrize("cloud", [True, False], ids=["cloud-v3", "datacenter-v2"])
def test_search_cursor_paging_comments_and_dedup(cloud: bool):
    assignee = BOT_ACCOUNT_ID if cloud else "veranda"
    with JiraFake(TOKEN, cloud=cloud, page_cap=1) as fake:
        seed(fake, assignee)
        jira = JiraClient(
            fake.base_url,
            TOKEN,
            email=fake.email if cloud else None,
            label="veranda",
            assignee=assignee,
            sleep=lambda s: None,
        )
        assert jira.api_version == ("3" if cloud else "2")
        pages = list(jira.iter_issue_pages())
        assert [i.key for p in pages for i in p] == ["PAY-1", "PAY-2", "PAY-3"]
        assert len(pages) == 3  # the server returned one issue per page
        newer = [i.key for p in jira.iter_issue_pages("2026/12/02 10:00") for i in p]
        assert newer == ["PAY-2", "PAY-3"]

        issue = jira.get_issue("PAY-2")
        assert issue.description == "Totals off by one cent."
        assert issue.attachments[0].url.endswith("/attachment/content/10100")

        fake.add_comment("PAY-2", "Please add a test.")
        first = jira.post_once("PAY-2", "Opened the change.", "veranda:00aa11bb22cc33dd")
        again = jira.post_once("PAY-2", "Opened the change.", "veranda:00aa11bb22cc33dd")
        assert first == again
        texts = fake.comment_texts("PAY-2")
        assert len(texts) == 2 and texts[1].endswith("[veranda:00aa11bb22cc33dd]")
        comments = jira.comments("PAY-2")
        assert [c.author_id for c in comments][1] == jira.myself().get(
            "accountId" if cloud else "name"
        )
        with pytest.raises(JiraNotFoundError):
            jira.get_issue("PAY-99")


def test_bad_credentials_and_rate_limit():
    with JiraFake(TOKEN) as fake:
        fake.file_issue("PAY-1", "x", labels=["veranda"])
        bad = JiraClient(fake.base_url, "wrong", email=fake.email, label="veranda")
        with pytest.raises(HttpAuthError):
            bad.get_issue("PAY-1")
        waits: list[float] = []
        jira = JiraClient(
            fake.base_url, TOKEN, email=fake.email, label="veranda", sleep=waits.append
        )
        fake.fail_next("/rest/api/3/search/jql", 429, retry_after=2)
        assert [i.key for p in jira.iter_issue_pages() for i in p] == ["PAY-1"]
        assert waits == [2.0]


def test_jql_evaluator_rejects_what_jira_rejects():
    issue = {"key": "A-1", "labels": ["x"], "project": "A", "category": "new",
             "assignee": None, "status": "To Do", "updated": T0}  # fmt: skip
    assert jql_match('labels = "x" AND statusCategory != Done', issue)
    assert jql_match("project in (A, B) AND NOT labels = y", issue)
    assert not jql_match('(labels = y OR assignee = "bob") AND project = A', issue)
    with pytest.raises(JqlError, match="does not exist"):
        jql_match("sprint = 3", issue)
    with pytest.raises(JqlError):
        jql_match("labels = ", issue)
