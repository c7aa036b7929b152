"""SlackClient against recorded Web API shapes: HTTP-200 errors, 429, pagination, replies."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sources.linear.test_linear_client import Script, reply
from veranda_dagster.domain.core.errors import ConfigError, InputError, TransientError
from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.sources.slack.client import SlackApiError, SlackClient
from veranda_dagster.sources.slack.limits import (
    MAX_SLACK_PAGES_PER_TICK,
    MAX_SLACK_THREAD_MESSAGES,
    SLACK_HISTORY_LIMIT,
)

TOKEN = "xoxb-SECRET-TOKEN"


def slack(script: Script, **kw: Any) -> tuple[SlackClient, list[float]]:
    slept: list[float] = []
    client = SlackClient(
        "https://slack.test/api", TOKEN, transport=script.transport(), sleep=slept.append, **kw
    )
    return client, slept


def test_history_sends_bearer_oldest_and_limit_and_returns_next_cursor():
    script = Script({"conversations.history": [reply("slack/history_page1.json")]})
    client, _ = slack(script)
    messages, nxt = client.history("C0ACME001", "1712345000.000000")
    assert len(messages) == 3 and nxt == "bmV4dF90czoxNzEyMzQ1NjYw"
    req = script.requests[0]
    assert req.headers["authorization"] == f"Bearer {TOKEN}"
    assert req.url.params["oldest"] == "1712345000.000000"
    assert req.url.params["inclusive"] == "false"
    assert req.url.params["limit"] == str(SLACK_HISTORY_LIMIT)
    assert "cursor" not in req.url.params


def test_iter_history_follows_cursor_and_stops_on_last_page():
    script = Script(
        {
            "conversations.history": [
                reply("slack/history_page1.json"),
                reply("slack/history_page2.json"),
            ]
        }
    )
    client, _ = slack(script)
    pages = list(client.iter_history("C0ACME001", None))
    assert [len(m) for m, _ in pages] == [3, 2] and pages[-1][1] is None
    assert script.requests[1].url.params["cursor"] == "bmV4dF90czoxNzEyMzQ1NjYw"


def test_iter_history_stops_exactly_at_the_page_bound():
    script = Script({"conversations.history": [reply("slack/history_page1.json")]})
    client, _ = slack(script)
    assert len(list(client.iter_history("C0ACME001", None))) == MAX_SLACK_PAGES_PER_TICK
    assert len(script.requests) == MAX_SLACK_PAGES_PER_TICK


def test_invalid_auth_on_http_200_is_an_auth_error_without_the_token():
    script = Script({"conversations.history": [reply("slack/invalid_auth.json")]})
    client, _ = slack(script)
    with pytest.raises(HttpAuthError, match="invalid_auth") as info:
        client.history("C0ACME001", None)
    assert TOKEN not in str(info.value)


def test_http_429_waits_retry_after():
    script = Script(
        {
            "conversations.history": [
                reply("slack/ratelimited.json", 429, {"Retry-After": "3"}),
                reply("slack/history_page2.json"),
            ]
        }
    )
    client, slept = slack(script)
    messages, _ = client.history("C0ACME001", None)
    assert slept == [3.0] and len(messages) == 2


def test_http_429_past_the_wait_bound_is_transient():
    script = Script(
        {"conversations.history": [reply("slack/ratelimited.json", 429, {"Retry-After": "600"})]}
    )
    client, slept = slack(script)
    with pytest.raises(TransientError):
        client.history("C0ACME001", None)
    assert slept == []


def test_ratelimited_in_a_200_body_is_retried():
    script = Script(
        {
            "conversations.history": [
                reply("slack/ratelimited.json", headers={"Retry-After": "1"}),
                reply("slack/history_empty.json"),
            ]
        }
    )
    client, slept = slack(script)
    client.history("C0ACME001", None)
    assert slept == [1.0]


def test_missing_scope_names_the_scope_and_other_errors_are_typed():
    script = Script({"conversations.history": [reply("slack/missing_scope.json")]})
    client, _ = slack(script)
    with pytest.raises(ConfigError, match="channels:history"):
        client.history("C0ACME001", None)
    script = Script({"conversations.replies": [reply("slack/channel_not_found.json")]})
    client, _ = slack(script)
    with pytest.raises(SlackApiError, match="channel_not_found"):
        client.replies("C0ACME001", "1.2")


def test_malformed_messages_is_an_input_error():
    script = Script({"conversations.history": [reply("slack/malformed_history.json")]})
    client, _ = slack(script)
    with pytest.raises(InputError, match="'messages'"):
        client.history("C0ACME001", None)


def test_post_message_replies_in_thread_and_returns_ts():
    script = Script({"chat.postMessage": [reply("slack/post_message.json")]})
    client, _ = slack(script)
    ts = client.post_message("C1H9RESGL", "PR opened", "1482960137.003543")
    assert ts == "1503435956.000247"
    import json

    body = json.loads(script.requests[0].content)
    assert body["thread_ts"] == "1482960137.003543" and body["unfurl_links"] is False


def test_bot_user_id_comes_from_auth_test_once():
    script = Script({"auth.test": [reply("slack/auth_test.json")]})
    client, _ = slack(script)
    assert client.bot_user_id == "U111" and client.bot_user_id == "U111"
    assert len(script.requests) == 1
    given, _ = slack(Script({}), bot_user_id="U999")
    assert given.bot_user_id == "U999"


@pytest.mark.parametrize(
    ("answered", "kept"),
    [(500, MAX_SLACK_THREAD_MESSAGES + 1), (MAX_SLACK_THREAD_MESSAGES + 1,) * 2],
    ids=["limit-ignored-cut-to-the-bound", "limit-honoured-all-kept"],
)
def test_a_thread_is_the_parent_and_at_most_max_slack_thread_messages_replies(answered, kept):
    """The reply limit is asked for, and the answer is cut to it as well: a workspace that
    answers 500 messages gives the parent and ``MAX_SLACK_THREAD_MESSAGES`` replies, oldest
    first; its twin answers exactly that many and all are kept."""
    messages = [{"ts": f"1712345000.{n:06}", "text": f"m{n}"} for n in range(answered)]
    script = Script({"conversations.replies": [reply(body={"ok": True, "messages": messages})]})
    client, _ = slack(script)
    thread = client.replies("C0ACME001", messages[0]["ts"])
    assert script.requests[0].url.params["limit"] == str(MAX_SLACK_THREAD_MESSAGES + 1)
    assert [m["text"] for m in thread] == [f"m{n}" for n in range(kept)]
