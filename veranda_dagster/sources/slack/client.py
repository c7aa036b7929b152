"""Slack Web API client: read channel history and threads, reply in a thread.

Slack reports most errors as HTTP 200 with ``{"ok": false, "error": ...}``, so the status code
alone says nothing: every call goes through ``_call``, which maps the error string to a type
(``invalid_auth`` -> ``HttpAuthError``, ``ratelimited`` -> retried then ``TransientError``,
``missing_scope`` -> ``ConfigError`` naming the scope). HTTP 429 with Retry-After is handled by
``HttpService`` before we get here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Unpack

from veranda_dagster.domain.core.errors import ConfigError, InputError, TransientError, VerandaError
from veranda_dagster.http.client import (
    MAX_HTTP_ATTEMPTS,
    MAX_RETRY_AFTER_S,
    HttpAuthError,
    HttpSeams,
    HttpService,
    retry_after_seconds,
)
from veranda_dagster.sources.slack.limits import (
    MAX_SLACK_PAGES_PER_TICK,
    MAX_SLACK_THREAD_MESSAGES,
    SLACK_HISTORY_LIMIT,
)

SLACK_API_URL = "https://slack.com/api"

_AUTH_ERRORS = frozenset(
    {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"}
)


class SlackApiError(VerandaError):
    """Slack answered ``ok: false`` with an error that is not auth, scope or rate limit."""

    def __init__(self, method: str, error: str) -> None:
        self.error = error
        super().__init__(f"slack {method} failed: {error}")


class SlackClient(HttpService):
    """Thin Web API client; ``bot_user_id`` is looked up with ``auth.test`` when not given."""

    service = "slack"

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        bot_user_id: str | None = None,
        **seams: Unpack[HttpSeams],
    ) -> None:
        super().__init__(base_url, token, **seams)
        self._bot_user_id = bot_user_id

    def _call(
        self, method: str, *, params: dict[str, Any] | None = None, body: Any = None
    ) -> dict[str, Any]:
        for attempt in range(1, MAX_HTTP_ATTEMPTS + 1):
            if body is None:
                response = self.request("GET", f"/{method}", params=_clean_params(params))
            else:
                response = self.request("POST", f"/{method}", json=body)
            try:
                payload = response.json()
            except ValueError:
                raise InputError(f"slack {method}: response body is not JSON") from None
            if not isinstance(payload, dict) or not isinstance(payload.get("ok"), bool):
                raise InputError(f"slack {method}: response has no boolean 'ok'")
            if payload["ok"]:
                return payload
            error = str(payload.get("error") or "unknown_error")
            if error == "ratelimited":
                wait = retry_after_seconds(response, default=min(2.0**attempt, 8.0))
                if attempt < MAX_HTTP_ATTEMPTS and wait <= MAX_RETRY_AFTER_S:
                    self._wait(wait)
                    continue
                raise TransientError(f"slack {method}: rate limited after {attempt} attempts")
            if error in _AUTH_ERRORS:
                raise HttpAuthError(f"slack rejected the credentials ({error})")
            if error == "missing_scope":
                needed = payload.get("needed") or "?"
                raise ConfigError(f"slack {method}: the bot token lacks the scope {needed!r}")
            raise SlackApiError(method, error)
        raise TransientError(f"slack {method}: rate limited")  # pragma: no cover

    @property
    def bot_user_id(self) -> str:
        """The bot's own user id (mentions are ``<@ID>``), from ``auth.test`` once."""
        if not self._bot_user_id:
            payload = self._call("auth.test")
            user_id = payload.get("user_id")
            if not isinstance(user_id, str) or not user_id:
                raise InputError("slack auth.test: 'user_id' is missing")
            self._bot_user_id = user_id
        return self._bot_user_id

    def history(
        self, channel: str, oldest: str | None, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of top-level messages newer than ``oldest`` (newest first) + next cursor."""
        payload = self._call(
            "conversations.history",
            params={
                "channel": channel,
                "oldest": oldest,
                "inclusive": "false",
                "limit": SLACK_HISTORY_LIMIT,
                "cursor": cursor,
            },
        )
        return _messages(payload, "conversations.history"), _next_cursor(payload)

    def iter_history(
        self, channel: str, oldest: str | None, cursor: str | None = None
    ) -> Iterator[tuple[list[dict[str, Any]], str | None]]:
        """History pages, at most ``MAX_SLACK_PAGES_PER_TICK``; yields (messages, next)."""
        for _ in range(MAX_SLACK_PAGES_PER_TICK):
            messages, cursor = self.history(channel, oldest, cursor)
            yield messages, cursor
            if not cursor:
                return

    def replies(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """The thread: parent first, then up to ``MAX_SLACK_THREAD_MESSAGES`` replies (the
        answer is cut there too: the limit asked for is the workspace's to honour)."""
        payload = self._call(
            "conversations.replies",
            params={
                "channel": channel,
                "ts": ts,
                "limit": MAX_SLACK_THREAD_MESSAGES + 1,
                "include_all_metadata": "true",
            },
        )
        return _messages(payload, "conversations.replies")[: MAX_SLACK_THREAD_MESSAGES + 1]

    def post_message(
        self,
        channel: str,
        text: str,
        thread_ts: str | None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Reply in the thread (or post to the channel); returns the new message ``ts``."""
        body: dict[str, Any] = {"channel": channel, "text": text, "unfurl_links": False}
        if thread_ts:
            body["thread_ts"] = thread_ts
        if metadata:
            body["metadata"] = metadata
        payload = self._call("chat.postMessage", body=body)
        ts = payload.get("ts")
        if not isinstance(ts, str) or not ts:
            raise InputError("slack chat.postMessage: 'ts' is missing")
        return ts


def _clean_params(params: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (params or {}).items() if v is not None}


def _messages(payload: dict[str, Any], method: str) -> list[dict[str, Any]]:
    messages = payload.get("messages")
    if not isinstance(messages, list):
        raise InputError(f"slack {method}: 'messages' is not a list")
    return [m for m in messages if isinstance(m, dict)]


def _next_cursor(payload: dict[str, Any]) -> str | None:
    meta = payload.get("response_metadata") or {}
    cursor = meta.get("next_cursor") if isinstance(meta, dict) else None
    if payload.get("has_more") and isinstance(cursor, str) and cursor:
        return cursor
    return None
