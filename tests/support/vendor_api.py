"""A loopback server that speaks vendor wire APIs, so a *real* vendor CLI can run in a test.

It emulates Anthropic Messages (``POST /v1/messages``, streaming SSE or JSON, plus
``count_tokens``: Claude Code 2.1.332), the OpenAI Responses API (``POST /v1/responses``, SSE:
Codex 0.171.0), OpenAI Chat Completions (``POST /v1/chat/completions``, SSE or JSON,
``GET /v1/models``) and the Gemini API (``:generateContent`` / ``:streamGenerateContent``:
Gemini CLI 0.61.0, whose schema-constrained router calls get a minimal valid object), with a
queue of scripted replies, a call log and failures on demand (401/403/429/5xx, with the
vendors' own error bodies). It binds 127.0.0.1 only. The call log
never stores an ``Authorization``/``x-api-key`` value, only whether one was sent.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from veranda_dagster.sim import wire_anthropic, wire_gemini
from veranda_dagster.sim.http_fake import LoopbackServer
from veranda_dagster.sim.model_listing import model_listing
from veranda_dagster.sim.wire import from_schema


@dataclass
class Reply:
    """One scripted model answer with the usage the server reports for it."""

    text: str
    input_tokens: int = 200
    output_tokens: int = 7
    cache_read_tokens: int = 1000
    model: str | None = None


@dataclass
class Failure:
    status: int
    message: str = ""
    retry_after: float | None = None
    kind: str | None = None
    """Anthropic error type / OpenAI error code override (e.g. ``insufficient_quota``)."""


@dataclass
class Call:
    method: str
    path: str
    model: str | None
    stream: bool
    authorized: bool
    status: int
    user_agent: str = ""
    at: float = field(default_factory=time.time)
    messages: str = ""
    """The request's ``messages`` as JSON text (what the model was shown, e.g. CLAUDE.md)."""


class VendorApiServer(LoopbackServer):
    """Start with ``with VendorApiServer() as api:``; point a CLI at ``api.base_url``."""

    name = "vendor-api"

    def __init__(self, default: Reply | None = None) -> None:
        self.default = default or Reply(text="OK")
        self.replies: deque[Reply] = deque()
        self.failures: deque[Failure] = deque()
        self.sticky_failure: Failure | None = None
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        super().__init__(_handler_for(self))

    # --- scripting ------------------------------------------------------------------------------

    def reply(self, text: str, **usage: Any) -> None:
        self.replies.append(Reply(text=text, **usage))

    def fail(self, status: int, times: int = 1, **kw: Any) -> None:
        for _ in range(times):
            self.failures.append(Failure(status=status, **kw))

    def fail_always(self, status: int, **kw: Any) -> None:
        self.sticky_failure = Failure(status=status, **kw)

    def model_calls(self) -> list[Call]:
        ends = ("/messages", "/chat/completions", "/responses")
        return [c for c in self.calls if c.path.endswith(ends)]

    # --- decisions (called by the handler) ------------------------------------------------------

    def _next(self) -> Reply | Failure:
        with self._lock:
            if self.sticky_failure is not None:
                return self.sticky_failure
            if self.failures:
                return self.failures.popleft()
            if self.replies:
                return self.replies.popleft()
            return self.default

    def _log(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)


def _handler_for(server: VendorApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                data = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                return {}
            return data if isinstance(data, dict) else {}

        def _authorized(self) -> bool:
            return bool(self.headers.get("x-api-key") or self.headers.get("authorization"))

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _record(self, path: str, body: dict[str, Any], status: int) -> None:
            server._log(
                Call(
                    method=self.command,
                    path=path,
                    model=body.get("model"),
                    stream=bool(body.get("stream")),
                    authorized=self._authorized(),
                    status=status,
                    user_agent=self.headers.get("user-agent", ""),
                    messages=json.dumps(body.get("messages") or []),
                )
            )

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path.endswith("/models"):
                self._record(path, {}, 200)
                self._send(200, model_listing(server.default.model or "sim-model"))
                return
            self._record(path, {}, 404)
            self._send(404, {"error": {"message": f"no route {path}"}})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            body = self._body()
            if ":streamGenerateContent" in path or ":generateContent" in path:
                self._gemini(path, body)
                return
            if path.endswith(":countTokens"):
                self._record(path, body, 200)
                self._send(200, {"totalTokens": 200})
                return
            if path.endswith("/messages/count_tokens"):
                self._record(path, body, 200)
                self._send(200, {"input_tokens": 200})
                return
            anthropic = path.endswith("/messages")
            responses = path.endswith("/responses")
            if not (anthropic or responses) and not path.endswith("/chat/completions"):
                self._record(path, body, 404)
                self._send(404, {"error": {"message": f"no route {path}"}})
                return
            decision = server._next()
            if isinstance(decision, Failure):
                self._record(path, body, decision.status)
                self._fail(decision, anthropic)
                return
            self._record(path, body, 200)
            model = decision.model or body.get("model") or "sim-model"
            if anthropic:
                self._anthropic(decision, model, bool(body.get("stream")))
            elif responses:
                self._responses(decision, model)
            else:
                self._openai(decision, model, bool(body.get("stream")))

        def _fail(self, f: Failure, anthropic: bool) -> None:
            headers = {"retry-after": str(f.retry_after)} if f.retry_after is not None else {}
            msg = f.message or {
                401: "invalid x-api-key",
                429: "Number of request tokens has exceeded your rate limit",
            }.get(f.status, "Internal server error")
            if anthropic:
                kind = f.kind or wire_anthropic.ERROR_TYPES.get(f.status, "api_error")
                payload: Any = {"type": "error", "error": {"type": kind, "message": msg}}
            else:
                payload = {"error": {"message": msg, "type": f.kind or "error", "code": f.kind}}
            self._send(f.status, payload, headers)

        def _sse(self, events: list[tuple[str | None, dict[str, Any]]]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in events:
                chunk = (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
                self.wfile.write(chunk.encode())
                self.wfile.flush()
            self.close_connection = True

        def _anthropic(self, r: Reply, model: str, stream: bool) -> None:
            mid = f"msg_{uuid.uuid4().hex[:20]}"
            usage = {
                "input_tokens": r.input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": r.cache_read_tokens,
                "output_tokens": r.output_tokens,
            }
            if not stream:
                self._send(
                    200,
                    {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [{"type": "text", "text": r.text}],
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": usage,
                    },
                )
                return
            start = {**usage, "output_tokens": 1}
            message: dict[str, Any] = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start,
            }
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": r.text}
            stop = {"stop_reason": "end_turn", "stop_sequence": None}
            self._sse(
                [
                    ("message_start", {"type": "message_start", "message": message}),
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": 0, "content_block": block},
                    ),
                    ("ping", {"type": "ping"}),
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": 0, "delta": delta},
                    ),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": stop,
                            "usage": {"output_tokens": r.output_tokens},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
            )

        def _gemini(self, path: str, body: dict[str, Any]) -> None:
            """Gemini API ``generateContent`` / ``streamGenerateContent?alt=sse``."""
            model = path.rsplit("/models/", 1)[-1].split(":", 1)[0] or "sim-model"
            gen = body.get("generationConfig") or {}
            schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
            if schema and server.sticky_failure is None:
                # Gemini CLI's router/classifier calls ask for JSON by schema before the turn;
                # answer them with a minimal valid object without spending a scripted reply.
                decision: Reply | Failure = Reply(text=json.dumps(from_schema(schema)))
            else:
                decision = server._next()
            status = decision.status if isinstance(decision, Failure) else 200
            server._log(
                Call(
                    method="POST",
                    path=path.split("?", 1)[0],
                    model=model,
                    stream="stream" in path,
                    authorized=bool(
                        self.headers.get("x-goog-api-key") or self.headers.get("authorization")
                    ),
                    status=status,
                    user_agent=self.headers.get("user-agent", ""),
                )
            )
            if isinstance(decision, Failure):
                msg = decision.message or {
                    401: "API key not valid. Please pass a valid API key.",
                    429: "You exceeded your current quota, please check your plan and billing.",
                }.get(decision.status, "Internal error encountered.")
                err = {
                    "code": decision.status,
                    "message": msg,
                    "status": wire_gemini.STATUSES.get(decision.status, "INTERNAL"),
                }
                self._send(decision.status, {"error": err})
                return
            r = decision
            usage = {
                "promptTokenCount": r.input_tokens + r.cache_read_tokens,
                "candidatesTokenCount": r.output_tokens,
                "cachedContentTokenCount": r.cache_read_tokens,
                "totalTokenCount": r.input_tokens + r.cache_read_tokens + r.output_tokens,
            }
            content = {"role": "model", "parts": [{"text": r.text}]}
            chunk = {
                "candidates": [{"content": content, "finishReason": "STOP", "index": 0}],
                "usageMetadata": usage,
                "modelVersion": r.model or model,
            }
            if "stream" in path:
                self._sse([(None, chunk)])
            else:
                self._send(200, chunk)

        def _responses(self, r: Reply, model: str) -> None:
            """OpenAI Responses API, streamed (what Codex speaks)."""
            rid, mid = f"resp_{uuid.uuid4().hex[:16]}", f"msg_{uuid.uuid4().hex[:16]}"
            part = {"type": "output_text", "text": r.text, "annotations": []}
            item = {
                "id": mid,
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
            usage = {
                "input_tokens": r.input_tokens + r.cache_read_tokens,
                "input_tokens_details": {"cached_tokens": r.cache_read_tokens},
                "output_tokens": r.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": r.input_tokens + r.cache_read_tokens + r.output_tokens,
            }
            base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
            started = {**base, "status": "in_progress", "output": []}
            done = {**base, "status": "completed", "output": [item], "usage": usage}
            pending = {**item, "status": "in_progress", "content": []}
            delta = {
                "type": "response.output_text.delta",
                "item_id": mid,
                "output_index": 0,
                "content_index": 0,
                "delta": r.text,
            }
            self._sse(
                [
                    ("response.created", {"type": "response.created", "response": started}),
                    (
                        "response.output_item.added",
                        {"type": "response.output_item.added", "output_index": 0, "item": pending},
                    ),
                    ("response.output_text.delta", delta),
                    (
                        "response.output_item.done",
                        {"type": "response.output_item.done", "output_index": 0, "item": item},
                    ),
                    ("response.completed", {"type": "response.completed", "response": done}),
                ]
            )

        def _openai(self, r: Reply, model: str, stream: bool) -> None:
            cid = f"chatcmpl-{uuid.uuid4().hex[:16]}"
            usage = {
                "prompt_tokens": r.input_tokens + r.cache_read_tokens,
                "completion_tokens": r.output_tokens,
                "total_tokens": r.input_tokens + r.cache_read_tokens + r.output_tokens,
                "prompt_tokens_details": {"cached_tokens": r.cache_read_tokens},
            }
            if not stream:
                msg = {"role": "assistant", "content": r.text}
                choice = {"index": 0, "message": msg, "finish_reason": "stop"}
                self._send(
                    200,
                    {
                        "id": cid,
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [choice],
                        "usage": usage,
                    },
                )
                return
            base = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
            }
            text_delta = {
                "index": 0,
                "delta": {"role": "assistant", "content": r.text},
                "finish_reason": None,
            }
            stop = {"index": 0, "delta": {}, "finish_reason": "stop"}
            self._sse(
                [
                    (None, {**base, "choices": [text_delta]}),
                    (None, {**base, "choices": [stop]}),
                    (None, {**base, "choices": [], "usage": usage}),
                ]
            )
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler
