"""Anthropic Messages (``POST /v1/messages``), as Claude Code 2.1.332 and the stand-in speak it.

Claude Code always asks for a stream; given plain JSON it retries the same request with
``stream: false``, so a server that ignores ``stream`` doubles every call. A tool call is a
``tool_use`` block, streamed as ``content_block_start`` plus one ``input_json_delta``; the
CLI runs the tool and sends the next request with a ``tool_result`` block in its last user
message, until a reply stops with ``end_turn``. The seat's prompt is the first user message;
Claude Code puts CLAUDE.md there too, as a ``<system-reminder>`` block before it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from veranda_dagster.sim.http_fake import FakeRequest, FakeResponse
from veranda_dagster.sim.wire import Conversation, StepAnswer, schema_props, sse, text_of

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
ERROR_MESSAGES = {
    401: "invalid x-api-key",
    429: "Number of request tokens has exceeded your rate limit",
    500: "Internal server error",
    529: "Overloaded",
}


def anthropic_error(status: int, message: str | None = None) -> dict[str, Any]:
    kind = ERROR_TYPES.get(status, "api_error")
    return {
        "type": "error",
        "error": {"type": kind, "message": message or ERROR_MESSAGES.get(status, "error")},
    }


def error(status: int, message: str | None = None) -> FakeResponse:
    return FakeResponse(status, anthropic_error(status, message))


def credential(request: FakeRequest) -> tuple[str, str]:
    """``x-api-key`` is API-key mode; ``Authorization: Bearer`` is a login/OAuth token (or
    GLM's key, which Claude Code sends as ``ANTHROPIC_AUTH_TOKEN``)."""
    key = request.headers.get("x-api-key", "").strip()
    if key:
        return "api_key", key
    bearer = request.bearer() or ""
    return ("oauth", bearer) if bearer else ("none", "")


def parse(body: dict[str, Any], request_chars: int) -> Conversation:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    step = sum(1 for m in messages if m.get("role") == "assistant")
    first_turn: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            break
        if message.get("role") == "user":
            first_turn.append(text_of(message.get("content")))
    last_reply = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1
    )
    # after the last reply: the tool's result, and sometimes a notice of its own (Claude Code
    # announces newly loaded deferred tools in a message that follows the result)
    results = _tool_results(messages[last_reply + 1 :]) if step else []
    history = _tool_results(messages)
    offered = {
        str(t["name"]): schema_props(t.get("input_schema"))
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("name")
    }
    return Conversation(
        wire="anthropic",
        model=body.get("model"),
        stream=bool(body.get("stream")),
        step=step,
        texts=first_turn,
        system=text_of(body.get("system")),
        offered=offered,
        tool_results=results,
        history=history,
        request_chars=request_chars,
    )


def _tool_results(messages: list[dict[str, Any]]) -> list[str]:
    return [
        text_of(b.get("content"))
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def answer(conv: Conversation, reply: StepAnswer, model: str) -> FakeResponse:
    blocks: list[dict[str, Any]] = []
    if reply.text or reply.call is None:
        blocks.append({"type": "text", "text": reply.text})
    if reply.call is not None:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:24]}",
                "name": reply.call.name,
                "input": reply.call.args,
            }
        )
    usage = {
        "input_tokens": reply.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": reply.output_tokens,
    }
    stop = "tool_use" if reply.call is not None else "end_turn"
    message = {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not conv.stream:
        return FakeResponse(200, message)
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(blocks):
        events += _block_events(index, block)
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(events)


def _block_events(index: int, block: dict[str, Any]) -> list[tuple[str | None, Any]]:
    if block["type"] == "text":
        empty: dict[str, Any] = {"type": "text", "text": ""}
        delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
    else:
        empty = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    return [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": empty},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]
