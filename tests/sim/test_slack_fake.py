"""The Slack fake, driven by the product's own SlackClient."""

from __future__ import annotations

import httpx
import pytest

from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.sim.slack_fake import BOT_USER_ID, SlackFake
from veranda_dagster.sources.slack.client import SlackApiError, SlackClient

TOKEN = "xoxb-fake-slack-token-1"


@pytest.fixture()
def slack():
    with SlackFake(token=TOKEN, channels=("C111",)) as fake:
        yield fake


def client(fake: SlackFake, token: str = TOKEN) -> SlackClient:
    sleeps: list[float] = []
    return SlackClient(fake.api_url, token, sleep=sleeps.append)


def test_auth_test_gives_the_bot_id(slack: SlackFake) -> None:
    assert client(slack).bot_user_id == BOT_USER_ID


def test_history_newest_first_with_oldest_and_pages(
    slack: SlackFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    import veranda_dagster.sources.slack.client as mod

    monkeypatch.setattr(mod, "SLACK_HISTORY_LIMIT", 2)
    first = slack.post_user_message("C111", "old news")
    ts = [slack.post_user_message("C111", f"fix ENG-{i}", mention_bot=True) for i in range(3)]
    c = client(slack)
    pages = list(c.iter_history("C111", oldest=first))
    texts = [m["text"] for page, _ in pages for m in page]
    assert texts == [f"<@{BOT_USER_ID}> fix ENG-{i}" for i in (2, 1, 0)]
    assert [len(page) for page, _ in pages] == [2, 1]
    assert pages[0][0][0]["ts"] == ts[2]


def test_thread_replies_parent_first_and_post_in_thread(slack: SlackFake) -> None:
    parent = slack.post_user_message("C111", "please fix billing", mention_bot=True)
    slack.post_user_message("C111", "repo is acme/billing", thread_ts=parent)
    c = client(slack)
    reply_ts = c.post_message("C111", "On it", parent, metadata={"event_type": "veranda"})
    thread = c.replies("C111", parent)
    assert thread[0]["ts"] == parent
    assert [m.get("text") for m in thread[1:]] == ["repo is acme/billing", "On it"]
    assert thread[-1]["ts"] == reply_ts and thread[-1]["metadata"] == {"event_type": "veranda"}
    assert slack.bot_replies("C111") == ["On it"]
    # replies stay out of the top-level history
    history, _ = c.history("C111", None)
    assert [m["ts"] for m in history] == [parent]
    assert history[0]["reply_count"] == 2


def test_errors_are_200_ok_false(slack: SlackFake) -> None:
    with pytest.raises(HttpAuthError):
        client(slack, token="xoxb-wrong").history("C111", None)
    with pytest.raises(SlackApiError, match="channel_not_found"):
        client(slack).history("C999", None)
    r = httpx.post(f"{slack.api_url}/conversations.history", data={"channel": "C111"})
    assert r.status_code == 200 and r.json() == {"ok": False, "error": "not_authed"}


def test_form_and_json_bodies(slack: SlackFake) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(headers=headers) as http:
        a = http.post(f"{slack.api_url}/chat.postMessage", data={"channel": "C111", "text": "f"})
        b = http.post(f"{slack.api_url}/chat.postMessage", json={"channel": "C111", "text": "j"})
    assert a.json()["ok"] and b.json()["ok"]
    assert slack.bot_replies("C111") == ["f", "j"]


def test_429_retry_after_then_success(slack: SlackFake) -> None:
    slack.fail_next("/api/conversations.history", 429, retry_after=2)
    c = client(slack)
    messages, _ = c.history("C111", None)
    assert messages == [] and c.waits == [2.0]
