"""Is this webhook from the source it claims, and fresh? One check per source, stdlib only.

Each source signs the raw body with a shared secret (verified against the reference notes,
``shared/reference/apis-linear-slack-github.md``, and the sources' public docs):

- **Linear**: ``Linear-Signature`` = hex HMAC-SHA256(secret, raw body); the signed body's
  ``webhookTimestamp`` (epoch ms) must be within ``LINEAR_MAX_SKEW_S`` (Linear's SDK rejects
  more than 60 s).
- **Slack**: ``X-Slack-Signature`` = ``v0=`` + hex HMAC-SHA256(signing secret,
  ``v0:{X-Slack-Request-Timestamp}:{raw body}``); the timestamp within ``SLACK_MAX_SKEW_S``
  (Slack's 5 minutes).
- **Jira** (an admin-registered webhook with a secret): ``X-Hub-Signature`` =
  ``sha256=`` + hex HMAC-SHA256(secret, raw body) (WebSub's ``method=signature`` form); Jira
  signs no timestamp header, so the signed body's ``timestamp`` (epoch ms), when present, must
  be within ``JIRA_MAX_SKEW_S``.

Every comparison is ``hmac.compare_digest`` (constant time), the signature is checked before
the body is parsed, and a refusal names what failed, never the secret or the body.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from typing import Any

from veranda_dagster.domain.core.errors import InputError

MAX_WEBHOOK_BODY_BYTES = 256 * 1024
"""Largest body the receiver reads; a larger one is refused (413) before it is read. Linear's,
Slack's and Jira's issue events are a few KiB; Jira's with a long description some tens."""
LINEAR_MAX_SKEW_S = 60.0
"""Linear's ``webhookTimestamp`` may differ from now by at most this (its SDK's own bound)."""
SLACK_MAX_SKEW_S = 300.0
"""Slack's ``X-Slack-Request-Timestamp`` may differ from now by at most this (Slack's bound)."""
JIRA_MAX_SKEW_S = 300.0
"""Jira's signed ``timestamp`` may differ from now by at most this."""
MAX_TIMESTAMP_CHARS = 20
"""A timestamp header longer than this is malformed, not parsed."""


class WebhookRefused(InputError):
    """A webhook the receiver will not act on; ``status`` is the HTTP answer."""

    status = 400


class WebhookMalformed(WebhookRefused):
    """The request is not a well-formed event of its source (400)."""

    status = 400


class WebhookUnauthorized(WebhookRefused):
    """The signature is missing or wrong, or the signed timestamp is too old or new (401)."""

    status = 401


class WebhookTooLarge(WebhookRefused):
    """The body is over ``MAX_WEBHOOK_BODY_BYTES`` (413)."""

    status = 413


class WebhookNotConfigured(WebhookRefused):
    """No secret is set for the source, so nothing it sends can be verified (503); its poll
    still works."""

    status = 503


def _hex_hmac(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def _same(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode(), given.strip().lower().encode("ascii", "replace"))


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise WebhookMalformed("the body is not JSON") from None
    except RecursionError:  # ten thousand ``[``: a 400 like any other unreadable body, not a 500
        raise WebhookMalformed("the body nests deeper than JSON is read") from None


def _fresh(stamp_s: float, now: float, bound_s: float, what: str) -> None:
    if abs(now - stamp_s) > bound_s:
        raise WebhookUnauthorized(f"{what} is more than {bound_s:.0f} s from now")


def _ms_field(payload: Any, name: str) -> float | None:
    """The body's epoch-milliseconds field ``name`` in seconds, or ``None`` when absent."""
    value = payload.get(name) if isinstance(payload, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) / 1000.0


def verify_linear(secret: str, body: bytes, headers: Mapping[str, str], now: float) -> Any:
    """The verified payload of a Linear webhook, or ``WebhookUnauthorized``/``Malformed``."""
    given = headers.get("linear-signature", "")
    if not given or not _same(_hex_hmac(secret, body), given):
        raise WebhookUnauthorized("Linear-Signature is missing or does not match")
    payload = _json(body)
    stamp = _ms_field(payload, "webhookTimestamp")
    if stamp is None:
        raise WebhookUnauthorized("the signed body has no numeric webhookTimestamp")
    _fresh(stamp, now, LINEAR_MAX_SKEW_S, "webhookTimestamp")
    return payload


def verify_slack(secret: str, body: bytes, headers: Mapping[str, str], now: float) -> Any:
    """The verified payload of a Slack Events API request (signing secret, v0)."""
    raw_ts = headers.get("x-slack-request-timestamp", "")
    given = headers.get("x-slack-signature", "")
    if not raw_ts or not given:
        raise WebhookUnauthorized("X-Slack-Signature or X-Slack-Request-Timestamp is missing")
    if len(raw_ts) > MAX_TIMESTAMP_CHARS or not raw_ts.isdigit():
        raise WebhookUnauthorized("X-Slack-Request-Timestamp is not a Unix time")
    _fresh(float(raw_ts), now, SLACK_MAX_SKEW_S, "X-Slack-Request-Timestamp")
    expected = "v0=" + _hex_hmac(secret, b"v0:" + raw_ts.encode() + b":" + body)
    if not _same(expected, given):
        raise WebhookUnauthorized("X-Slack-Signature does not match")
    return _json(body)


def verify_jira(secret: str, body: bytes, headers: Mapping[str, str], now: float) -> Any:
    """The verified payload of a Jira webhook registered with a secret (``X-Hub-Signature``)."""
    given = headers.get("x-hub-signature", "")
    method, _, digest = given.partition("=")
    if method.strip().lower() != "sha256" or not digest:
        raise WebhookUnauthorized("X-Hub-Signature is missing or not sha256=<hex>")
    if not _same(_hex_hmac(secret, body), digest):
        raise WebhookUnauthorized("X-Hub-Signature does not match")
    payload = _json(body)
    stamp = _ms_field(payload, "timestamp")
    if stamp is not None:
        _fresh(stamp, now, JIRA_MAX_SKEW_S, "timestamp")
    return payload


Verifier = Callable[[str, bytes, Mapping[str, str], float], Any]
"""(secret, raw body, lower-cased headers, now) -> the verified payload."""

VERIFIERS: dict[str, Verifier] = {
    "linear": verify_linear,
    "slack": verify_slack,
    "jira": verify_jira,
}
"""Source name -> its signature check."""

SECRET_ENV: dict[str, str] = {
    "linear": "LINEAR_WEBHOOK_SECRET",
    "slack": "SLACK_SIGNING_SECRET",
    "jira": "JIRA_WEBHOOK_SECRET",
}
"""Source name -> the variable its webhook secret arrives in (unset: the source's webhooks are
refused with ``WebhookNotConfigured`` and its poll alone brings its tickets)."""


def sign_linear(secret: str, body: bytes) -> dict[str, str]:
    """The headers Linear sends with ``body`` (for tests, the simulator and the benchmark)."""
    return {"Linear-Signature": _hex_hmac(secret, body)}


def sign_slack(secret: str, body: bytes, timestamp: int) -> dict[str, str]:
    """The headers Slack sends with ``body`` at ``timestamp``."""
    stamp = str(timestamp)
    return {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": "v0=" + _hex_hmac(secret, f"v0:{stamp}:".encode() + body),
    }


def sign_jira(secret: str, body: bytes) -> dict[str, str]:
    """The headers Jira sends with ``body``."""
    return {"X-Hub-Signature": "sha256=" + _hex_hmac(secret, body)}
