"""The signed fields of a push request are read within their bounds: a Slack timestamp of the
same instant padded with zeros past ``MAX_TIMESTAMP_CHARS`` is refused though its signature
matches, and at the bound it is accepted; a Slack challenge or delivery id past
``MAX_DELIVERY_ID_CHARS`` is not taken, at the bound it is."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from veranda_dagster.sources.webhook_auth import (
    MAX_TIMESTAMP_CHARS,
    WebhookMalformed,
    WebhookUnauthorized,
    verify_slack,
)
from veranda_dagster.sources.webhook_events import MAX_DELIVERY_ID_CHARS, Scope, slack_event

SECRET = "slack-signing-secret"
NOW = 1_790_000_000


def _signed(raw_ts: str, body: bytes) -> dict[str, str]:
    mac = hmac.new(SECRET.encode(), b"v0:" + raw_ts.encode() + b":" + body, hashlib.sha256)
    return {"x-slack-request-timestamp": raw_ts, "x-slack-signature": "v0=" + mac.hexdigest()}


@pytest.mark.parametrize(
    ("width", "accepted"),
    [(MAX_TIMESTAMP_CHARS + 1, False), (MAX_TIMESTAMP_CHARS, True)],
    ids=["past-the-bound", "at-the-bound"],
)
def test_a_slack_timestamp_is_read_within_max_timestamp_chars(width: int, accepted: bool) -> None:
    body = json.dumps({"type": "event_callback"}).encode()
    raw_ts = str(NOW).zfill(width)  # the same instant, signed as sent
    if accepted:
        assert verify_slack(SECRET, body, _signed(raw_ts, body), NOW) == {"type": "event_callback"}
    else:
        with pytest.raises(WebhookUnauthorized, match="not a Unix time"):
            verify_slack(SECRET, body, _signed(raw_ts, body), NOW)


@pytest.mark.parametrize(
    ("length", "taken"),
    [(MAX_DELIVERY_ID_CHARS + 1, False), (MAX_DELIVERY_ID_CHARS, True)],
    ids=["past-the-bound", "at-the-bound"],
)
def test_a_slack_challenge_is_taken_within_max_delivery_id_chars(length: int, taken: bool) -> None:
    payload = {"type": "url_verification", "challenge": "c" * length}
    if taken:
        assert slack_event(payload, {}, Scope()).reply == {"challenge": "c" * length}
    else:
        with pytest.raises(WebhookMalformed, match="usable challenge"):
            slack_event(payload, {}, Scope())
