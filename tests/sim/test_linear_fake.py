"""The Linear fake, driven by the product's own LinearClient (so the shapes are aligned)."""

from __future__ import annotations

import pytest

from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.sim.linear_fake import BOT_USER_ID, LinearFake
from veranda_dagster.sources.linear.client import LinearClient

TOKEN = "lin_api_fake_linear_token_1"


@pytest.fixture()
def linear():
    with LinearFake(token=TOKEN) as fake:
        yield fake


def client(fake: LinearFake, token: str = TOKEN, **kw) -> LinearClient:
    sleeps: list[float] = []
    return LinearClient(fake.graphql_url, token, sleep=sleeps.append, bot_user_id=BOT_USER_ID, **kw)


def test_poll_filters_by_assignee_label_and_updated_at(linear: LinearFake) -> None:
    mine = linear.file_ticket("Fix invoice", "Repo: acme/billing")
    linear.file_ticket("Someone else's", assignee="lin-user-other")
    labelled = linear.file_ticket("Labelled", assignee=None, labels=["Agent"])
    linear.file_ticket("Closed", state="done")
    c = client(linear, label="agent")
    nodes, info = c.list_issues(None)
    assert {n["identifier"] for n in nodes} == {mine["identifier"], labelled["identifier"]}
    assert info["hasNextPage"] is False
    nodes, _ = c.list_issues(labelled["updatedAt"])
    assert nodes == []
    linear.touch(mine["identifier"], description="Repo: acme/billing\nmore detail")
    nodes, _ = c.list_issues(labelled["updatedAt"])
    assert [n["identifier"] for n in nodes] == [mine["identifier"]]


def test_pagination_walks_every_issue_once(
    linear: LinearFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    import veranda_dagster.sources.linear.client as mod

    monkeypatch.setattr(mod, "LINEAR_PAGE_SIZE", 2)
    filed = {linear.file_ticket(f"t{i}")["identifier"] for i in range(5)}
    pages = list(client(linear).iter_issue_pages(None))
    assert [len(nodes) for nodes, _ in pages] == [2, 2, 1]
    assert {n["identifier"] for nodes, _ in pages for n in nodes} == filed


def test_get_issue_by_identifier_and_comment_round_trip(linear: LinearFake) -> None:
    issue = linear.file_ticket("Fix invoice", "Repo: acme/billing")
    c = client(linear)
    got = c.get_issue(issue["identifier"])
    assert got["id"] == issue["id"] and got["description"] == "Repo: acme/billing"
    comment_id = c.comment_create(issue["id"], "PR opened")
    assert comment_id.startswith("comment-")
    assert linear.bot_comments(issue["identifier"]) == ["PR opened"]
    assert [n["body"] for n in c.comments(issue["id"])] == ["PR opened"]


def test_unknown_issue_and_bad_token(linear: LinearFake) -> None:
    with pytest.raises(Exception, match="not found"):
        client(linear).get_issue("ENG-999")
    with pytest.raises(HttpAuthError):
        client(linear, token="lin_api_wrong").get_issue("ENG-1")


def test_429_with_retry_after_is_waited_out(linear: LinearFake) -> None:
    issue = linear.file_ticket("Fix invoice")
    linear.fail_next("/graphql", 429, times=2, retry_after=3)
    c = client(linear)
    assert c.get_issue(issue["identifier"])["identifier"] == issue["identifier"]
    assert c.waits == [3.0, 3.0]
    assert [r.status for r in linear.requests] == [429, 429, 200]
