"""LinearClient against an httpx.MockTransport answering with recorded response shapes.

``Script`` (reused by the Slack and sensor tests) routes a request by GraphQL ``operationName``
or by the last URL path segment and answers from a queue per route, recording every request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from veranda_dagster.domain.core.bounds import MAX_RATE_LIMIT_RESET_WAIT_S
from veranda_dagster.domain.core.errors import InputError, TransientError
from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.sources.linear.client import (
    LinearApiError,
    LinearClient,
    LinearRateLimitError,
)
from veranda_dagster.sources.linear.limits import (
    MAX_LINEAR_PAGES_PER_TICK,
    MAX_LINEAR_RATELIMIT_RETRIES,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TOKEN = "lin_api_SECRETSECRET"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def reply(name: str | None = None, status: int = 200, headers: dict | None = None, body=None):
    """A recorded response: a fixture file (``linear/poll_page1.json``) or a literal body."""
    payload = fixture(name) if name else body
    content = payload if isinstance(payload, str) else json.dumps(payload)
    return httpx.Response(status, headers=headers or {}, content=content.encode())


class Script:
    def __init__(self, routes: dict[str, list[httpx.Response | Callable]]) -> None:
        self.routes = {k: list(v) for k, v in routes.items()}
        self.requests: list[httpx.Request] = []

    @staticmethod
    def route_of(request: httpx.Request) -> str:
        if request.method == "POST" and request.url.path.endswith("graphql"):
            return json.loads(request.content)["operationName"]
        return request.url.path.rsplit("/", 1)[-1]

    def calls(self, route: str) -> list[httpx.Request]:
        return [r for r in self.requests if self.route_of(r) == route]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        queue = self.routes.get(self.route_of(request))
        if not queue:
            return httpx.Response(404, json={"error": f"no route {self.route_of(request)}"})
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        return item(request) if callable(item) else item

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def variables(request: httpx.Request) -> dict[str, Any]:
    return json.loads(request.content)["variables"]


def linear(script: Script, **kw: Any) -> tuple[LinearClient, list[float]]:
    slept: list[float] = []
    client = LinearClient(
        "https://linear.test/graphql",
        kw.pop("token", TOKEN),
        transport=script.transport(),
        sleep=slept.append,
        **kw,
    )
    return client, slept


def test_personal_key_goes_raw_and_oauth_as_bearer():
    script = Script({"GetIssue": [reply("linear/get_issue_eng_123.json")]})
    client, _ = linear(script)
    client.get_issue("ENG-123")
    assert script.requests[-1].headers["authorization"] == TOKEN
    oauth, _ = linear(script, token="oauth-token-1")
    oauth.get_issue("ENG-123")
    assert script.requests[-1].headers["authorization"] == "Bearer oauth-token-1"


def test_poll_filter_scopes_to_bot_label_open_states_and_cursor():
    script = Script({"PollIssues": [reply("linear/poll_page2.json")]})
    client, _ = linear(script, bot_user_id="u-bot", label="veranda")
    nodes, page = client.list_issues("2026-08-01T10:00:00.000Z", after="abc")
    assert [n["identifier"] for n in nodes] == ["ENG-3"] and page["hasNextPage"] is False
    sent = variables(script.requests[0])
    assert sent["after"] == "abc" and sent["first"] == 50
    flt = sent["filter"]
    assert flt["updatedAt"] == {"gt": "2026-08-01T10:00:00.000Z"}
    assert {"assignee": {"id": {"eq": "u-bot"}}} in flt["or"]
    assert {"delegate": {"id": {"eq": "u-bot"}}} in flt["or"]
    assert {"labels": {"some": {"name": {"eqIgnoreCase": "veranda"}}}} in flt["or"]
    assert flt["state"] == {"type": {"nin": ["completed", "canceled"]}}


def test_without_bot_id_the_viewer_is_used_and_first_poll_has_no_date_filter():
    script = Script({"PollIssues": [reply("linear/poll_empty.json")]})
    client, _ = linear(script)
    client.list_issues(None)
    flt = variables(script.requests[0])["filter"]
    assert "updatedAt" not in flt and {"assignee": {"isMe": {"eq": True}}} in flt["or"]


def test_iter_pages_follows_end_cursor_until_last_page():
    script = Script(
        {"PollIssues": [reply("linear/poll_page1.json"), reply("linear/poll_page2.json")]}
    )
    client, _ = linear(script)
    pages = list(client.iter_issue_pages(None))
    assert [len(nodes) for nodes, _ in pages] == [2, 1]
    assert variables(script.requests[1])["after"] == "Y3Vyc29yLTE="


def test_iter_pages_stops_exactly_at_the_page_bound():
    script = Script({"PollIssues": [reply("linear/poll_more.json")]})
    client, _ = linear(script)
    pages = list(client.iter_issue_pages(None))
    assert len(pages) == MAX_LINEAR_PAGES_PER_TICK == len(script.requests)


def test_http_429_waits_retry_after_then_succeeds():
    script = Script(
        {
            "PollIssues": [
                reply("linear/error_ratelimited.json", 429, {"retry-after": "7"}),
                reply("linear/poll_page2.json"),
            ]
        }
    )
    client, slept = linear(script)
    nodes, _ = client.list_issues(None)
    assert slept == [7.0] and len(nodes) == 1


def test_graphql_ratelimited_is_retried_up_to_the_bound_then_typed():
    script = Script(
        {"PollIssues": [reply("linear/error_ratelimited.json", headers={"retry-after": "2"})]}
    )
    client, slept = linear(script)
    with pytest.raises(LinearRateLimitError):
        client.list_issues(None)
    assert slept == [2.0] * MAX_LINEAR_RATELIMIT_RETRIES
    assert len(script.requests) == MAX_LINEAR_RATELIMIT_RETRIES + 1
    assert isinstance(LinearRateLimitError("x"), TransientError)


@pytest.mark.parametrize("past", [True, False], ids=["past", "at"])
def test_a_ratelimit_reset_past_the_wait_bound_is_not_waited(past: bool):
    """A rate limit whose ``retry-after`` is one second past ``MAX_RATE_LIMIT_RESET_WAIT_S``
    is a typed ``LinearRateLimitError`` at once, nothing slept; its twin, exactly at the
    bound, is waited and the poll goes on."""
    wait = MAX_RATE_LIMIT_RESET_WAIT_S + (1 if past else 0)
    limited = reply("linear/error_ratelimited.json", headers={"retry-after": f"{wait:g}"})
    script = Script({"PollIssues": [limited, reply("linear/poll_page2.json")]})
    client, slept = linear(script)
    if past:
        with pytest.raises(LinearRateLimitError):
            client.list_issues(None)
        assert slept == [] and len(script.requests) == 1
    else:
        nodes, _ = client.list_issues(None)
        assert slept == [MAX_RATE_LIMIT_RESET_WAIT_S] and len(nodes) == 1


def test_graphql_400_ratelimited_is_retried_too():
    script = Script(
        {
            "PollIssues": [
                reply("linear/error_ratelimited.json", 400),
                reply("linear/poll_empty.json"),
            ]
        }
    )
    client, slept = linear(script)
    client.list_issues(None)
    assert len(slept) == 1


def test_exhausted_window_makes_the_next_request_wait_for_reset():
    now = [1_000.0]
    headers = {"x-ratelimit-requests-remaining": "0", "x-ratelimit-requests-reset": "1012"}
    script = Script(
        {
            "PollIssues": [
                reply("linear/poll_page1.json", headers=headers),
                reply("linear/poll_page2.json"),
            ]
        }
    )
    client, slept = linear(script, clock=lambda: now[0])
    client.list_issues(None)
    assert slept == []  # the first answer is used at once; only the next call waits
    client.list_issues(None, after="Y3Vyc29yLTE=")
    assert slept == [12.0]


def test_window_reset_in_milliseconds_and_too_far_is_transient():
    now = [1_700_000_000.0]
    reset_ms = "1700000300000"  # epoch milliseconds: 300 s from now
    headers = {"x-ratelimit-requests-remaining": "0", "x-ratelimit-requests-reset": reset_ms}
    script = Script({"PollIssues": [reply("linear/poll_page1.json", headers=headers)]})
    client, slept = linear(script, clock=lambda: now[0])
    client.list_issues(None)
    with pytest.raises(LinearRateLimitError, match="resets in 300s"):
        client.list_issues(None)
    assert slept == []


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (lambda: reply("linear/error_authentication.json"), HttpAuthError),
        (lambda: reply("linear/error_authentication.json", 401), HttpAuthError),
        (lambda: reply("linear/error_invalid_input.json"), LinearApiError),
        (lambda: reply(body="<html>bad gateway</html>"), InputError),
        (lambda: reply("linear/malformed_nodes.json"), InputError),
    ],
)
def test_errors_are_typed(response, error):
    script = Script({"PollIssues": [response()]})
    client, _ = linear(script)
    with pytest.raises(error) as info:
        client.list_issues(None)
    assert TOKEN not in str(info.value)


def test_invalid_input_message_is_the_user_presentable_one():
    script = Script({"CommentCreate": [reply("linear/error_invalid_input.json")]})
    client, _ = linear(script)
    with pytest.raises(LinearApiError, match="issueId must be a UUID"):
        client.comment_create("not-a-uuid", "hi")


def test_comment_create_sends_issue_uuid_and_returns_comment_id():
    script = Script({"CommentCreate": [reply("linear/comment_create.json")]})
    client, _ = linear(script)
    assert client.comment_create("9cfb482a-uuid", "PR: https://x/pull/43") == "c2"
    sent = variables(script.requests[0])["input"]
    assert sent == {"issueId": "9cfb482a-uuid", "body": "PR: https://x/pull/43"}


def test_5xx_body_echoing_the_token_is_redacted():
    echo = reply(body=f"upstream said Authorization: {TOKEN}", status=418)
    script = Script({"GetIssue": [echo]})
    client, _ = linear(script)
    with pytest.raises(Exception) as info:
        client.get_issue("ENG-1")
    assert TOKEN not in str(info.value) and "***" in str(info.value)
