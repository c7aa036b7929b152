"""``slack_mentions`` against an HTTP-level fake of the Slack Web API and a test instance."""

from __future__ import annotations

import json
from collections import Counter
from typing import ClassVar

import dagster as dg
import httpx
import pytest

from tests.sources.linear.test_linear_client import Script, reply
from tests.support.sensor_instance import keys_of, launch, runs_per_ticket, ticket_job
from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.sources.slack.client import SlackClient
from veranda_dagster.sources.slack.limits import MAX_SLACK_CHANNELS, MAX_SLACK_THREADS_PER_TICK
from veranda_dagster.sources.slack.resource import SlackResource
from veranda_dagster.sources.slack.sensor import slack_mentions

C1, C2 = "C0ACME001", "C0ACME002"
ROOT_KEY = f"slack-{C1}-1712345680.000300"
THREAD_KEY = f"slack-{C1}-1712345670.000200"
PAGE2_KEY = f"slack-{C1}-1712345660.000100"


class ScriptedSlack(SlackResource):
    scripts: ClassVar[dict[str, tuple[Script, list[float]]]] = {}

    def client(self) -> SlackClient:
        script, slept = self.scripts["default"]
        return SlackClient(
            "https://slack.test/api",
            self.bot_token,
            transport=script.transport(),
            sleep=slept.append,
            bot_user_id=self.bot_user_id,
        )


def tick(instance, script, cursor=None, channels=(C1,), slept=None):
    ScriptedSlack.scripts["default"] = (script, slept if slept is not None else [])
    resource = ScriptedSlack(bot_token="xoxb-test", channels=list(channels))
    context = dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"slack": resource}
    )
    return slack_mentions(context)


def slack_script(*history: str, **extra) -> Script:
    routes = {
        "auth.test": [reply("slack/auth_test.json")],
        "conversations.history": [reply(f"slack/{h}.json") for h in history],
        "conversations.replies": [reply("slack/replies_thread.json")],
    }
    routes.update(extra)
    return Script(routes)


def test_unconfigured_token_or_channels_skip_with_a_reason(instance):
    no_token = dg.build_sensor_context(instance=instance, resources={"slack": SlackResource()})
    result = slack_mentions(no_token)
    assert isinstance(result, dg.SkipReason) and "SLACK_BOT_TOKEN" in result.skip_message
    no_channels = dg.build_sensor_context(
        instance=instance, resources={"slack": SlackResource(bot_token="xoxb-x")}
    )
    result = slack_mentions(no_channels)
    assert isinstance(result, dg.SkipReason) and "SLACK_CHANNELS" in result.skip_message


def test_pages_and_threads_become_one_run_per_mentioning_thread(instance):
    script = slack_script("history_page1", "history_page2")
    result = tick(instance, script)
    # root mention, a mention inside a thread's replies, and a mention on page 2;
    # the bot's own message and the unmentioned chatter are not tickets.
    assert keys_of(result) == [ROOT_KEY, PAGE2_KEY, THREAD_KEY]
    assert script.calls("conversations.history")[1].url.params["cursor"] == (
        "bmV4dF90czoxNzEyMzQ1NjYw"
    )
    assert script.calls("conversations.replies")[0].url.params["ts"] == "1712345670.000200"
    cursor = json.loads(result.cursor)["channels"][C1]
    assert cursor == {"oldest": "1712345680.000300", "page": None, "pending": None}


def test_cursor_advance_and_an_edited_message_yield_one_run(instance):
    first = tick(instance, slack_script("history_page1", "history_page2"))
    launch(instance, first)
    script = slack_script("history_edited")
    second = tick(instance, script, cursor=first.cursor)
    assert script.calls("conversations.history")[0].url.params["oldest"] == "1712345680.000300"
    assert keys_of(second) == []
    assert runs_per_ticket(instance)[ROOT_KEY] == 1


def test_429_with_retry_after_waits_and_loses_nothing(instance):
    script = slack_script(
        "history_page1",
        "history_page2",
    )
    script.routes["conversations.history"].insert(
        0, reply("slack/ratelimited.json", 429, {"Retry-After": "4"})
    )
    slept: list[float] = []
    result = tick(instance, script, slept=slept)
    assert slept == [4.0]
    assert set(keys_of(result)) == {ROOT_KEY, PAGE2_KEY, THREAD_KEY}


def test_429_past_its_bound_skips_keeps_the_cursor_and_recovers_once(instance):
    start = json.dumps({"channels": {C1: {"oldest": "1712345000.000000"}}})
    limited = slack_script()
    limited.routes["conversations.history"] = [
        reply("slack/ratelimited.json", 429, {"Retry-After": "900"})
    ]
    skipped = tick(instance, limited, cursor=start)
    assert isinstance(skipped, dg.SkipReason) and "retrying next tick" in skipped.skip_message
    recovered = tick(instance, slack_script("history_page1", "history_page2"), cursor=start)
    launch(instance, recovered)
    again = tick(instance, slack_script("history_page1", "history_page2"), cursor=start)
    assert keys_of(again) == []  # even re-reading the same window: the instance says taken
    assert runs_per_ticket(instance) == Counter({ROOT_KEY: 1, PAGE2_KEY: 1, THREAD_KEY: 1})


def test_invalid_auth_raises_a_typed_error_and_requests_nothing(instance):
    script = slack_script()
    script.routes["auth.test"] = [reply("slack/invalid_auth.json")]
    with pytest.raises(HttpAuthError, match="invalid_auth"):
        tick(instance, script)
    assert len(instance.get_runs()) == 0


def test_malformed_channel_keeps_its_cursor_while_the_other_advances(instance):
    start = {"channels": {C1: {"oldest": "1712345000.000000"}, C2: {"oldest": "1712345000.000000"}}}

    def history(request):
        channel = request.url.params["channel"]
        name = "malformed_history" if channel == C1 else "history_in_flight_ref"
        return reply(f"slack/{name}.json")

    script = slack_script()
    script.routes["conversations.history"] = [history]
    result = tick(instance, script, cursor=json.dumps(start), channels=(C1, C2))
    cursor = json.loads(result.cursor)["channels"]
    assert cursor[C1]["oldest"] == "1712345000.000000"  # not advanced past unread messages
    assert cursor[C2]["oldest"] == "1712345700.000100"
    assert keys_of(result) == [f"slack-{C2}-1712345700.000100"]
    launch(instance, result)
    healed = tick(instance, slack_script("history_page1", "history_page2"), cursor=result.cursor)
    assert set(keys_of(healed)) == {ROOT_KEY, PAGE2_KEY, THREAD_KEY}


def test_mention_of_a_linear_ticket_in_flight_starts_no_new_run(instance):
    instance.create_run_for_job(
        ticket_job, tags={TICKET_TAG: "ENG-123"}, status=dg.DagsterRunStatus.STARTED
    )
    result = tick(instance, slack_script("history_in_flight_ref"))
    assert keys_of(result) == []
    # A reference to a ticket that is not in flight is its own Slack ticket.
    page2 = tick(instance, slack_script("history_page2"))
    assert keys_of(page2) == [PAGE2_KEY]  # mentions ENG-999, which has no run


@pytest.mark.parametrize("race", ["partition_added_run_not_created", "first_run_failed"])
def test_a_mention_racing_a_linear_tickets_first_run_starts_no_second_run(instance, race):
    """The Linear sensor registered ENG-123 and its run is not created yet, or that run
    failed (it is re-executed from its last good asset, never twinned from Slack)."""
    if race == "partition_added_run_not_created":
        instance.add_dynamic_partitions("tickets", ["ENG-123"])
    else:
        instance.create_run_for_job(
            ticket_job, tags={TICKET_TAG: "ENG-123"}, status=dg.DagsterRunStatus.FAILURE
        )
    result = tick(instance, slack_script("history_in_flight_ref"))
    assert keys_of(result) == []
    assert runs_per_ticket(instance).get("ENG-123", 0) <= 1


def test_restart_with_a_new_context_and_lost_cursor_yields_one_run_each(instance):
    first = tick(instance, slack_script("history_page1", "history_page2"))
    launch(instance, first)
    restarted = tick(instance, slack_script("history_page1", "history_page2"), cursor=None)
    assert keys_of(restarted) == []
    assert runs_per_ticket(instance) == Counter({ROOT_KEY: 1, PAGE2_KEY: 1, THREAD_KEY: 1})


def test_from_env_reads_channels(monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-x")
    monkeypatch.setenv("SLACK_CHANNELS", "C0ACME001, C0ACME002,")
    resource = SlackResource.from_env()
    assert resource.configured and resource.channels == [C1, C2]
    monkeypatch.delenv("SLACK_BOT_TOKEN")
    assert not SlackResource.from_env().configured


def _history_of(messages):
    return lambda request: httpx.Response(
        200, json={"ok": True, "has_more": False, "messages": messages}
    )


def test_threads_opened_per_channel_stop_exactly_at_the_bound(instance):
    roots = [
        {
            "type": "message",
            "user": "U222",
            "text": "chatter",
            "ts": f"17123450{i:02d}.000100",
            "thread_ts": f"17123450{i:02d}.000100",
            "reply_count": 1,
        }
        for i in range(MAX_SLACK_THREADS_PER_TICK + 2)
    ]
    script = slack_script()
    script.routes["conversations.history"] = [_history_of(roots)]
    tick(instance, script)
    assert len(script.calls("conversations.replies")) == MAX_SLACK_THREADS_PER_TICK


def test_channels_polled_per_tick_stop_exactly_at_the_bound(instance):
    channels = [f"C0CH{i:05d}" for i in range(MAX_SLACK_CHANNELS + 3)]
    script = slack_script("history_empty")
    result = tick(instance, script, channels=channels)
    polled = [r.url.params["channel"] for r in script.calls("conversations.history")]
    assert polled == channels[:MAX_SLACK_CHANNELS]
    assert set(json.loads(result.cursor)["channels"]) == set(channels[:MAX_SLACK_CHANNELS])
