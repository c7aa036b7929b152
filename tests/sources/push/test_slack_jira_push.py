"""Slack's and Jira's webhooks through the running receiver: signatures, then one run each."""

from __future__ import annotations

import json
import time
from typing import Any

import dagster as dg
import pytest
from dagster._core.storage.tags import PARTITION_NAME_TAG, SENSOR_NAME_TAG

from tests.sources.push.conftest import SECRETS, Receiver
from tests.sources.push.test_linear_push import linear_body, post, post_linear, runs_of
from veranda_dagster.sources.webhook_auth import SLACK_MAX_SKEW_S, sign_jira, sign_slack

THREAD = "slack-C0ACME001-1712345670.000200"


def slack_body(text: str = "<@UBOT> please fix the invoice total", **event: Any) -> bytes:
    return json.dumps(
        {
            "type": "event_callback",
            "event_id": event.pop("event_id", "Ev1"),
            "event": {
                "type": "app_mention",
                "channel": "C0ACME001",
                "user": "U123",
                "ts": "1712345670.000200",
                "text": text,
                **event,
            },
        }
    ).encode()


def post_slack(push: Receiver, body: bytes, stamp: int | None = None) -> tuple[int, Any]:
    headers = sign_slack(SECRETS["slack"], body, int(time.time()) if stamp is None else stamp)
    return post(f"{push.url}/webhooks/slack", body, headers)


def jira_body(key: str = "PAY-17", labels: tuple[str, ...] = ("veranda",)) -> bytes:
    return json.dumps(
        {
            "webhookEvent": "jira:issue_created",
            "timestamp": int(time.time() * 1000),
            "issue": {"key": key, "fields": {"labels": list(labels), "project": {"key": "PAY"}}},
        }
    ).encode()


def test_a_slack_mention_creates_the_threads_run(push: Receiver) -> None:
    status, answer = post_slack(push, slack_body())
    assert (status, answer["outcome"]) == (201, "run created"), answer
    [run] = runs_of(push.instance, THREAD)
    assert run.tags[PARTITION_NAME_TAG] == THREAD
    assert run.tags[SENSOR_NAME_TAG] == "slack_mentions"
    assert run.status == dg.DagsterRunStatus.QUEUED


def test_slack_url_verification_echoes_the_challenge(push: Receiver) -> None:
    body = json.dumps({"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV"}).encode()
    assert post_slack(push, body) == (200, {"challenge": "3eZbrw1aBm2rZgRNFdxV"})


@pytest.mark.parametrize(
    ("sign", "status"),
    [
        (
            lambda b: {
                "X-Slack-Request-Timestamp": str(int(time.time())),
                "X-Slack-Signature": "v0=" + "0" * 64,
            },
            401,
        ),
        (lambda b: sign_slack(SECRETS["slack"], b, int(time.time() - SLACK_MAX_SKEW_S - 5)), 401),
        (lambda b: sign_slack("another-secret", b, int(time.time())), 401),
        (lambda b: {"X-Slack-Request-Timestamp": "1e9", "X-Slack-Signature": "v0=00"}, 401),
    ],
    ids=["bad-signature", "stale-timestamp", "wrong-secret", "timestamp-not-a-number"],
)
def test_a_badly_signed_slack_request_is_refused(push: Receiver, sign: Any, status: int) -> None:
    body = slack_body()
    got, answer = post(f"{push.url}/webhooks/slack", body, sign(body))
    assert got == status, answer
    assert runs_of(push.instance, THREAD) == []


def test_a_mention_of_a_ticket_with_a_run_is_no_new_ticket(push: Receiver) -> None:
    assert post_linear(push, linear_body("ENG-761"))[0] == 201
    other = slack_body(
        "<@UBOT> any news on ENG-761?", event_id="Ev3", channel="C0ACME002", ts="1712345999.000100"
    )
    status, answer = post_slack(push, other)
    assert (status, answer["outcome"]) == (200, "held"), answer
    assert runs_of(push.instance, "slack-C0ACME002-1712345999.000100") == []


def test_a_jira_issue_with_the_label_creates_its_run(push: Receiver) -> None:
    body = jira_body()
    status, answer = post(f"{push.url}/webhooks/jira", body, sign_jira(SECRETS["jira"], body))
    assert (status, answer["outcome"]) == (201, "run created"), answer
    [run] = runs_of(push.instance, "jira-PAY-17")
    assert run.tags[PARTITION_NAME_TAG] == "jira-PAY-17"


@pytest.mark.parametrize(
    "headers",
    [{"X-Hub-Signature": "sha256=" + "0" * 64}, {"X-Hub-Signature": "sha1=abc"}, {}],
    ids=["bad-signature", "not-sha256", "missing"],
)
def test_a_badly_signed_jira_webhook_is_refused(push: Receiver, headers: dict[str, str]) -> None:
    status, _ = post(f"{push.url}/webhooks/jira", jira_body("PAY-18"), headers)
    assert status == 401
    assert runs_of(push.instance, "jira-PAY-18") == []


def test_a_jira_issue_without_label_or_assignee_is_left_to_the_poll(push: Receiver) -> None:
    body = jira_body("PAY-19", labels=("other",))
    status, answer = post(f"{push.url}/webhooks/jira", body, sign_jira(SECRETS["jira"], body))
    assert (status, answer["outcome"]) == (202, "ignored")
    assert runs_of(push.instance, "jira-PAY-19") == []
