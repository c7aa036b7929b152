"""Fake Slack Web API: ``auth.test``, ``conversations.history``/``replies``, ``chat.postMessage``.

Slack reports errors as HTTP 200 with ``{"ok": false, "error": ...}`` (``invalid_auth``,
``not_authed``, ``channel_not_found``, ``thread_not_found``); only rate limiting is an HTTP
status (429 + Retry-After, body ``{"ok":false,"error":"ratelimited"}``), which is what an
injected 429 answers here. Arguments are read from the query string, a form body or a JSON
body, as Slack accepts all three. Methods answer under ``/api/<method>`` and ``/<method>``.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from typing import Any

from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse

BOT_USER_ID = "U111"
BOT_ID = "B111"
TEAM_ID = "T111"
HUMAN_USER_ID = "U222"
MAX_HISTORY_LIMIT = 999


class SlackFake(FakeHttpServer):
    """``post_user_message`` plays a human; ``bot_replies`` reads what the product posted."""

    name = "slack"

    def __init__(self, token: str | None = None, channels: tuple[str, ...] = ("C111",)) -> None:
        super().__init__()
        self.token = token
        self.channels: dict[str, list[dict[str, Any]]] = {c: [] for c in channels}
        self._seq = itertools.count(1)
        self._base_ts = int(time.time()) - 600

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api"

    # --- test/demo API --------------------------------------------------------------------------

    def _ts(self) -> str:
        return f"{self._base_ts + next(self._seq)}.{next(self._seq):06d}"

    def post_user_message(
        self,
        channel: str,
        text: str,
        *,
        user: str = HUMAN_USER_ID,
        thread_ts: str | None = None,
        mention_bot: bool = False,
    ) -> str:
        """Add a human message (a mention when ``mention_bot``); returns its ``ts``."""
        if mention_bot:
            text = f"<@{BOT_USER_ID}> {text}"
        with self.lock:
            return str(self._add(channel, {"user": user, "text": text}, thread_ts)["ts"])

    def messages(self, channel: str) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(m) for m in self.channels.get(channel, [])]

    def bot_replies(self, channel: str) -> list[str]:
        return [m["text"] for m in self.messages(channel) if m.get("bot_id") == BOT_ID]

    def _add(self, channel: str, fields: dict[str, Any], thread_ts: str | None) -> dict[str, Any]:
        ts = self._ts()
        msg: dict[str, Any] = {"type": "message", "ts": ts, "team": TEAM_ID, **fields}
        log = self.channels.setdefault(channel, [])
        if thread_ts:
            parent = next((m for m in log if m["ts"] == thread_ts), None)
            if parent is not None:
                parent.setdefault("thread_ts", thread_ts)
                parent["reply_count"] = parent.get("reply_count", 0) + 1
                parent["latest_reply"] = ts
                msg["parent_user_id"] = parent.get("user")
            msg["thread_ts"] = thread_ts
        log.append(msg)
        return msg

    def fault_body(self, status: int) -> Any:
        if status == 429:
            return {"ok": False, "error": "ratelimited"}
        return {"ok": False, "error": "fatal_error"}

    # --- dispatch -------------------------------------------------------------------------------

    def handle(self, request: FakeRequest) -> FakeResponse:
        method = request.path.rstrip("/").rsplit("/", 1)[-1]
        handler = {
            "auth.test": self._auth_test,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
            "chat.postMessage": self._post,
            "chat.getPermalink": self._permalink,
        }.get(method)
        if handler is None:
            return _fail("unknown_method")
        token = request.bearer()
        if not token:
            return _fail("not_authed")
        if self.token is not None and token != self.token:
            return _fail("invalid_auth")
        with self.lock:
            return handler(request.params())

    def _auth_test(self, _: dict[str, Any]) -> FakeResponse:
        return _ok(
            team_id=TEAM_ID,
            team="acme",
            user="agentbot",
            user_id=BOT_USER_ID,
            bot_id=BOT_ID,
            url="https://acme.slack.com/",
        )

    def _history(self, args: dict[str, Any]) -> FakeResponse:
        channel = str(args.get("channel") or "")
        if channel not in self.channels:
            return _fail("channel_not_found")
        inclusive = str(args.get("inclusive", "false")).lower() in ("1", "true")
        top = [
            m
            for m in self.channels[channel]
            if m.get("thread_ts") in (None, m["ts"]) or m.get("subtype") == "thread_broadcast"
        ]
        top = [
            m for m in top if _in_window(m["ts"], args.get("oldest"), args.get("latest"), inclusive)
        ]
        top.sort(key=lambda m: float(m["ts"]), reverse=True)
        return self._page(top, args)

    def _replies(self, args: dict[str, Any]) -> FakeResponse:
        channel = str(args.get("channel") or "")
        if channel not in self.channels:
            return _fail("channel_not_found")
        ts = str(args.get("ts") or "")
        parent = next((m for m in self.channels[channel] if m["ts"] == ts), None)
        if parent is None:
            return _fail("thread_not_found")
        replies = [m for m in self.channels[channel] if m.get("thread_ts") == ts and m["ts"] != ts]
        replies = [m for m in replies if _in_window(m["ts"], args.get("oldest"), None, False)]
        return self._page([parent, *sorted(replies, key=lambda m: float(m["ts"]))], args)

    def _page(self, items: list[dict[str, Any]], args: dict[str, Any]) -> FakeResponse:
        try:
            limit = max(1, min(int(args.get("limit") or 100), MAX_HISTORY_LIMIT))
        except ValueError:
            return _fail("invalid_arguments")
        offset = _decode(str(args.get("cursor") or ""))
        page = items[offset : offset + limit]
        more = offset + limit < len(items)
        cursor = _encode(offset + limit) if more else ""
        return _ok(
            messages=[dict(m) for m in page],
            has_more=more,
            pin_count=0,
            response_metadata={"next_cursor": cursor},
        )

    def _post(self, args: dict[str, Any]) -> FakeResponse:
        channel = str(args.get("channel") or "")
        text = args.get("text")
        if channel not in self.channels:
            return _fail("channel_not_found")
        if not text and not args.get("blocks"):
            return _fail("no_text")
        thread = args.get("thread_ts") or None
        if thread and not any(m["ts"] == thread for m in self.channels[channel]):
            return _fail("thread_not_found")
        fields: dict[str, Any] = {"user": BOT_USER_ID, "bot_id": BOT_ID, "text": str(text or "")}
        metadata = args.get("metadata")
        if isinstance(metadata, str):
            try:
                metadata = json.loads(metadata)
            except ValueError:
                return _fail("invalid_metadata_format")
        if metadata:
            fields["metadata"] = metadata
        if str(args.get("reply_broadcast", "")).lower() in ("1", "true") and thread:
            fields["subtype"] = "thread_broadcast"
        msg = self._add(channel, fields, thread)
        return _ok(channel=channel, ts=msg["ts"], message=dict(msg))

    def _permalink(self, args: dict[str, Any]) -> FakeResponse:
        channel, ts = str(args.get("channel") or ""), str(args.get("message_ts") or "")
        if not any(m["ts"] == ts for m in self.channels.get(channel, [])):
            return _fail("message_not_found")
        link = f"https://acme.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        return _ok(channel=channel, permalink=link)


def _ok(**fields: Any) -> FakeResponse:
    return FakeResponse(200, {"ok": True, **fields})


def _fail(error: str) -> FakeResponse:
    return FakeResponse(200, {"ok": False, "error": error})


def _in_window(ts: str, oldest: Any, latest: Any, inclusive: bool) -> bool:
    value = float(ts)
    if oldest not in (None, ""):
        low = float(oldest)
        if value < low or (value == low and not inclusive):
            return False
    if latest not in (None, ""):
        high = float(latest)
        if value > high or (value == high and not inclusive):
            return False
    return True


def _encode(offset: int) -> str:
    return base64.b64encode(f"next_ts:{offset}".encode()).decode()


def _decode(cursor: str) -> int:
    if not cursor:
        return 0
    try:
        return int(base64.b64decode(cursor).decode().split(":", 1)[1])
    except (ValueError, IndexError):
        return 0
