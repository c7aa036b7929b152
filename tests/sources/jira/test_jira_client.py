"""JiraClient against httpx.MockTransport answering with Jira's documented response shapes
(Cloud v3 ``search/jql`` token paging and ADF bodies; Data Center v2 ``startAt`` paging and
wiki-markup bodies; the ``errorMessages`` error body; 429 with ``Retry-After``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from veranda_dagster.domain.core.bounds import (
    MAX_RATE_LIMIT_RESET_WAIT_S,
    MAX_RICH_TEXT_DEPTH,
    MAX_TICKET_COMMENT_PAGES,
    MAX_TICKET_SEARCH_PAGES_PER_TICK,
)
from veranda_dagster.domain.core.errors import ConfigError, InputError, TransientError
from veranda_dagster.http.client import MAX_HTTP_ATTEMPTS, HttpAuthError
from veranda_dagster.sources.jira.adf import adf_to_text, text_to_adf
from veranda_dagster.sources.jira.client import (
    JiraClient,
    JiraNotFoundError,
    JiraPermissionError,
    jql_string,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "jira"
CLOUD = "https://acme.atlassian.net"
TOKEN = "ATATT3xFfGF0SECRETSECRET"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def respond(name: str | None = None, status: int = 200, headers=None, body=None):
    payload = fixture(name) if name else body
    return httpx.Response(status, headers=headers or {}, json=payload)


class Recorder:
    def __init__(self, *responses: httpx.Response) -> None:
        self.queue = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.queue.pop(0)


def cloud(recorder: Recorder, **kw: Any) -> tuple[JiraClient, list[float]]:
    waits: list[float] = []
    client = JiraClient(
        CLOUD,
        TOKEN,
        email="bot@acme.io",
        label="veranda",
        transport=httpx.MockTransport(recorder),
        sleep=waits.append,
        **kw,
    )
    return client, waits


def test_cloud_uses_basic_auth_v3_and_walks_next_page_tokens():
    rec = Recorder(respond("search_v3_page1.json"), respond("search_v3_page2.json"))
    client, _ = cloud(rec)
    pages = list(client.iter_issue_pages("2026/12/02 16:00"))
    assert [[i.key for i in p] for p in pages] == [["PAY-16", "PAY-17"], ["PAY-20"]]
    first, second = rec.requests
    assert first.url.path == "/rest/api/3/search/jql"
    assert "nextPageToken" not in first.url.params
    assert second.url.params["nextPageToken"] == "CAEaAggD"
    jql = first.url.params["jql"]
    assert 'labels = "veranda"' in jql and 'updated >= "2026/12/02 16:00"' in jql
    assert jql.endswith("ORDER BY updated ASC, key ASC")
    expected = base64.b64encode(f"bot@acme.io:{TOKEN}".encode()).decode()
    assert first.headers["authorization"] == f"Basic {expected}"
    assert pages[0][1].description == "Retries charge twice."


def test_data_center_uses_bearer_pat_v2_and_start_at_paging():
    rec = Recorder(respond("search_v2_page1.json"), respond("search_v2_page2.json"))
    client = JiraClient(
        "https://jira.acme.internal/jira",
        "NjE2MzQ1OTk0OTAxOkPAT",
        assignee="veranda",
        transport=httpx.MockTransport(rec),
    )
    assert client.api_version == "2"
    pages = list(client.iter_issue_pages())
    assert [i.key for p in pages for i in p] == ["OPS-1", "OPS-2", "OPS-3"]
    assert [r.url.params["startAt"] for r in rec.requests] == ["0", "2"]
    assert rec.requests[0].url.path == "/jira/rest/api/2/search"
    assert rec.requests[0].headers["authorization"] == "Bearer NjE2MzQ1OTk0OTAxOkPAT"
    assert 'assignee = "veranda"' in rec.requests[0].url.params["jql"]
    assert pages[0][0].description.startswith("The {{backup.sh}} job")  # wiki text kept
    assert pages[0][0].assignee == "veranda"


def test_search_stops_at_the_page_bound():
    page = {"issues": [], "nextPageToken": "again"}
    rec = Recorder(*[respond(body=page) for _ in range(MAX_TICKET_SEARCH_PAGES_PER_TICK + 2)])
    client, _ = cloud(rec)
    assert len(list(client.iter_issue_pages())) == MAX_TICKET_SEARCH_PAGES_PER_TICK
    assert len(rec.requests) == MAX_TICKET_SEARCH_PAGES_PER_TICK


def test_issue_with_adf_description_and_attachment_urls():
    rec = Recorder(respond("issue_v3_adf.json"))
    client, _ = cloud(rec)
    issue = client.get_issue("PAY-17")
    assert issue.url == f"{CLOUD}/browse/PAY-17"
    assert issue.status_category == "indeterminate"
    assert issue.assignee == "5b10ac8d82e05b22cc7d4ef5"
    assert issue.attachments[0].url.endswith("/attachment/content/10100")
    text = issue.description
    assert text.startswith("## What happens\n\nWhen `refund_webhook` retries")
    assert "the runbook (https://wiki.acme.io/refunds)" in text
    assert "@Dana saw it twice." in text
    assert "- billing/refunds.py\n- idempotency key ignored" in text
    assert "```python\ncharge(order, key=None)\nretry()\n```" in text
    assert "| env | rate |\n| prod | 2% |" in text
    assert "https://github.com/acme/billing/pull/9" in text


def test_hostile_adf_depth_is_bounded():
    node: dict[str, Any] = {"type": "text", "text": "deep"}
    for _ in range(MAX_RICH_TEXT_DEPTH * 3):
        node = {"type": "blockquote", "content": [node]}
    doc = {"type": "doc", "version": 1, "content": [node]}
    assert "deep" not in adf_to_text(doc)
    assert adf_to_text({"type": "doc", "content": "not a list"}) == ""
    assert adf_to_text(None) == "" and adf_to_text(["x"]) == ""


def test_text_to_adf_round_trips_paragraphs_breaks_and_code():
    text = "Opened a PR.\nSee below.\n\n```diff\n-a\n+b\n```\n\n[veranda:abc]"
    doc = text_to_adf(text)
    assert doc["type"] == "doc" and doc["version"] == 1
    assert [n["type"] for n in doc["content"]] == ["paragraph", "codeBlock", "paragraph"]
    assert doc["content"][1]["attrs"] == {"language": "diff"}
    assert adf_to_text(doc) == text


MYSELF = {"accountId": "5b10ac8d82e05b22cc7d4ef5", "displayName": "Veranda Bot"}


def test_comments_and_post_once_with_the_dedup_marker():
    rec = Recorder(httpx.Response(200, json=MYSELF), respond("comments_v3.json"))
    client, _ = cloud(rec)
    assert client.post_once("PAY-17", "again", "veranda:0123456789abcdef") == "30002"
    assert [r.url.path.rsplit("/", 1)[-1] for r in rec.requests] == ["myself", "comment"]

    rec = Recorder(respond("comments_v3.json"), respond("comment_created_v3.json", 201))
    client, _ = cloud(rec)
    comments = client.comments("PAY-17")  # asked newest first, returned oldest first
    assert rec.requests[0].url.params["orderBy"] == "-created"
    assert [c.id for c in comments] == ["30001", "30002"]
    assert comments[0].author_name == "Dana Reyes"
    assert comments[0].body == "Please also cover partial refunds."
    rec.queue[:0] = [httpx.Response(200, json=MYSELF), respond("comments_v3.json")]
    assert client.post_once("PAY-17", "PR opened:\nhttps://x/1", "veranda:feedfacefeedface") == (
        "30003"
    )
    posted = json.loads(rec.requests[-1].content)["body"]
    assert posted["type"] == "doc"
    assert adf_to_text(posted).endswith("[veranda:feedfacefeedface]")


def test_data_center_posts_wiki_text():
    rec = Recorder(respond(body={"id": "9"}, status=201))
    client = JiraClient(
        "https://jira.acme.internal", "pat", assignee="veranda", transport=httpx.MockTransport(rec)
    )
    assert client.add_comment("OPS-1", "hello") == "9"
    assert json.loads(rec.requests[0].content) == {"body": "hello"}
    assert rec.requests[0].url.path == "/rest/api/2/issue/OPS-1/comment"


@pytest.mark.parametrize(
    ("status", "name", "error"),
    [
        (401, "error_401.json", HttpAuthError),
        (403, "error_403.json", JiraPermissionError),
        (404, "error_404.json", JiraNotFoundError),
    ],
)
def test_typed_errors_without_the_token(status, name, error):
    rec = Recorder(respond(name, status))
    client, _ = cloud(rec)
    with pytest.raises(error) as caught:
        client.get_issue("PAY-17")
    assert TOKEN not in str(caught.value)
    assert len(rec.requests) == 1  # not retried


def test_429_waits_retry_after_then_succeeds():
    rec = Recorder(
        respond(body={"errorMessages": ["rate limited"]}, status=429, headers={"Retry-After": "7"}),
        respond("issue_v3_adf.json"),
    )
    client, waits = cloud(rec)
    assert client.get_issue("PAY-17").key == "PAY-17"
    assert waits == [7.0]


@pytest.mark.parametrize("past", [True, False], ids=["past", "at"])
def test_429_past_the_wait_bound_is_transient(past: bool):
    """A ``Retry-After`` one second past ``MAX_RATE_LIMIT_RESET_WAIT_S`` is not slept through
    in-line: a ``TransientError`` at once; its twin, exactly at the bound, is waited."""
    wait = MAX_RATE_LIMIT_RESET_WAIT_S + (1 if past else 0)
    rec = Recorder(
        respond(body={}, status=429, headers={"Retry-After": f"{wait:g}"}),
        respond("issue_v3_adf.json"),
    )
    client, waits = cloud(rec)
    if past:
        with pytest.raises(TransientError, match=f"rate limited.*retry in {wait:.0f}s"):
            client.get_issue("PAY-17")
        assert waits == []
    else:
        assert client.get_issue("PAY-17").key == "PAY-17"
        assert waits == [MAX_RATE_LIMIT_RESET_WAIT_S]


def test_429_retries_are_bounded():
    rec = Recorder(*[respond(body={}, status=429, headers={"Retry-After": "1"})] * 10)
    client, waits = cloud(rec)
    with pytest.raises(TransientError):
        client.get_issue("PAY-17")
    assert waits == [1.0] * (MAX_HTTP_ATTEMPTS - 1)
    assert len(rec.requests) == MAX_HTTP_ATTEMPTS


def test_hostile_keys_and_config_are_refused():
    client, _ = cloud(Recorder())
    with pytest.raises(InputError):
        client.get_issue("../../admin")
    with pytest.raises(ConfigError):
        JiraClient(CLOUD, TOKEN, email="a@b")  # no label, no assignee: would poll everything
    assert jql_string('a"b\\c') == '"a\\"b\\\\c"'
    with pytest.raises(ConfigError):
        JiraClient("http://jira.acme.io", TOKEN, label="x")  # token over plain http


def test_a_marker_a_person_pasted_is_not_our_post():
    """Dana pastes our marker line; the post is still made, once, by us."""
    comments = fixture("comments_v3.json")
    comments["comments"] = [
        dict(c, body=adf("[veranda:0123456789abcdef]"))
        for c in comments["comments"]
        if c["author"]["displayName"] == "Dana Reyes"
    ]
    comments["total"] = 1
    rec = Recorder(
        httpx.Response(200, json=MYSELF),
        httpx.Response(200, json=comments),
        respond("comment_created_v3.json", 201),
    )
    client, _ = cloud(rec)
    created = client.post_once("PAY-17", "again", "veranda:0123456789abcdef")
    assert created != comments["comments"][0]["id"] and rec.requests[-1].method == "POST"


def adf(text: str) -> dict[str, Any]:
    return {"type": "doc", "version": 1, "content": [
        {"type": "paragraph", "content": [{"type": "text", "text": text}]}
    ]}  # fmt: skip


def _marked(marks: list[dict]) -> dict:
    return {
        "type": "doc",
        "content": [
            {"type": "paragraph", "content": [{"type": "text", "text": "a", "marks": marks}]}
        ],
    }


CODE = {"type": "code"}
LINK = {"type": "link", "attrs": {"href": "http://h/x"}}


@pytest.mark.parametrize(
    ("marks", "expected"),
    [
        ([CODE], "`a`"),
        ([LINK], "a (http://h/x)"),
        ([CODE, LINK], "`a` (http://h/x)"),
        ([LINK, CODE], "`a (http://h/x)`"),
        ([CODE, CODE, LINK, LINK], "`a` (http://h/x)"),  # a repeat adds nothing
        ([CODE, "x", {"type": "strong"}], "`a`"),
        ([{"type": ["code"]}, {"type": {}}, CODE], "`a`"),  # a type that is no name: skipped
    ],
)
def test_each_mark_type_is_applied_once(marks, expected):
    assert adf_to_text(_marked(marks)) == expected


def test_thousands_of_repeated_marks_cost_linear_work():
    """Eight times the marks may cost at most 24 times the CPU (each repeat wrapping the text
    again: about 45 times, and the text grew with the square)."""
    import time

    def cpu(n: int) -> float:
        doc = _marked([CODE, LINK] * n)
        started = time.thread_time()
        adf_to_text(doc)
        return time.thread_time() - started

    large = cpu(160_000)
    assert large < 1.0
    if large >= 0.05:
        assert large / max(min(cpu(20_000) for _ in range(3)), 1e-3) <= 24


@pytest.mark.parametrize(
    ("total", "pages"),
    [(10**6, MAX_TICKET_COMMENT_PAGES), (3, 3)],
    ids=["endless-thread-stops-at-the-bound", "short-thread-read-to-its-end"],
)
def test_comment_pages_are_read_up_to_max_ticket_comment_pages(total, pages):
    """The tracker says how many comments there are: a thread it says never ends (one comment
    a page) is read for ``MAX_TICKET_COMMENT_PAGES`` pages, newest first; its twin, a thread
    of three, is read to its end in three."""
    template = fixture("comments_v3.json")["comments"][0]
    asked: list[int] = []

    def pages_without_end(request: httpx.Request) -> httpx.Response:
        start = int(request.url.params["startAt"])
        asked.append(start)
        comment = {**template, "id": str(40000 + start)}
        return httpx.Response(200, json={"startAt": start, "total": total, "comments": [comment]})

    client, _ = cloud(pages_without_end)  # type: ignore[arg-type]
    found = client.comments("PAY-17")
    assert asked == list(range(pages))
    assert [c.id for c in found] == [str(40000 + n) for n in reversed(range(pages))]
