"""OpenAI's two wires: Responses (Codex 0.171.0) and Chat Completions (Kimi, Grok, opencode).

Responses: the turn is an ``input`` list; a tool call is a ``function_call`` item (streamed as
``response.output_item.added`` / ``function_call_arguments.delta`` / ``output_item.done``) and
its result comes back as a ``function_call_output`` item. Chat Completions: a tool call is an
assistant message's ``tool_calls`` (streamed as deltas, ``finish_reason: tool_calls``), its
result a ``tool`` message. Two CLIs make side calls there that are no part of the seat's turn:
opencode asks for a title with no tools offered; Grok forces its only tool, ``session_title``.
Every chunk carries ``created`` (Grok refuses one without it).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from veranda_dagster.sim.http_fake import FakeRequest, FakeResponse
from veranda_dagster.sim.renderers import ToolCall
from veranda_dagster.sim.wire import Conversation, StepAnswer, schema_props, sse, text_of

ERRORS = {
    400: ("invalid_request_error", "invalid_request_error", "Invalid request"),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided"),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests"),
    500: ("server_error", "server_error", "The server had an error while processing your request"),
}
TITLE = "Veranda sim session"


def error(status: int, message: str | None = None) -> FakeResponse:
    kind, code, default = ERRORS.get(status, ("server_error", "server_error", "error"))
    body = {"error": {"message": message or default, "type": kind, "code": code, "param": None}}
    return FakeResponse(status, body)


def credential(request: FakeRequest) -> tuple[str, str]:
    """OpenAI-style APIs take the key as a bearer token."""
    bearer = request.bearer() or ""
    return ("api_key", bearer) if bearer else ("none", "")


def _usage_responses(reply: StepAnswer) -> dict[str, Any]:
    return {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


# --- Responses ---------------------------------------------------------------------------------


def parse_responses(body: dict[str, Any], request_chars: int) -> Conversation:
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    items = [i for i in items or [] if isinstance(i, dict)]
    calls = [n for n, i in enumerate(items) if i.get("type") == "function_call"]
    first = calls[0] if calls else len(items)
    texts = [
        text_of(i.get("content"))
        for i in items[:first]
        if i.get("type", "message") == "message" and i.get("role") == "user"
    ]
    system = [str(body.get("instructions") or "")] + [
        text_of(i.get("content")) for i in items if i.get("role") in ("developer", "system")
    ]
    results = [
        text_of(i.get("output"))
        for i in items[(calls[-1] if calls else len(items)) :]
        if i.get("type") == "function_call_output"
    ]
    offered = {
        str(t["name"]): schema_props(t.get("parameters"))
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("type") == "function" and t.get("name")
    }
    return Conversation(
        wire="responses",
        model=body.get("model"),
        stream=bool(body.get("stream")),
        step=len(calls),
        texts=texts,
        system="\n".join(s for s in system if s),
        offered=offered,
        tool_results=results,
        request_chars=request_chars,
    )


def answer_responses(conv: Conversation, reply: StepAnswer, model: str) -> FakeResponse:
    output: list[dict[str, Any]] = []
    if reply.text or reply.call is None:
        output.append(
            {
                "id": f"msg_{uuid.uuid4().hex[:16]}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    if reply.call is not None:
        output.append(
            {
                "id": f"fc_{uuid.uuid4().hex[:16]}",
                "type": "function_call",
                "status": "completed",
                "call_id": f"call_{uuid.uuid4().hex[:16]}",
                "name": reply.call.name,
                "arguments": json.dumps(reply.call.args),
            }
        )
    base = {
        "id": f"resp_{uuid.uuid4().hex[:16]}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
    }
    done = {**base, "status": "completed", "output": output, "usage": _usage_responses(reply)}
    if not conv.stream:
        return FakeResponse(200, done)
    events: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {"type": "response.created", "response": {**base, "status": "in_progress"}},
        )
    ]
    for index, item in enumerate(output):
        events += _item_events(index, item)
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return sse(events)


def _item_events(index: int, item: dict[str, Any]) -> list[tuple[str | None, Any]]:
    at = {"item_id": item["id"], "output_index": index}
    if item["type"] == "message":
        pending: dict[str, Any] = {**item, "status": "in_progress", "content": []}
        text = item["content"][0]["text"]
        middle: list[tuple[str | None, Any]] = [
            (
                "response.output_text.delta",
                {"type": "response.output_text.delta", **at, "content_index": 0, "delta": text},
            )
        ]
    else:
        pending = {**item, "status": "in_progress", "arguments": ""}
        args = item["arguments"]
        middle = [
            (
                "response.function_call_arguments.delta",
                {"type": "response.function_call_arguments.delta", **at, "delta": args},
            ),
            (
                "response.function_call_arguments.done",
                {"type": "response.function_call_arguments.done", **at, "arguments": args},
            ),
        ]
    return [
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": index, "item": pending},
        ),
        *middle,
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": index, "item": item},
        ),
    ]


# --- Chat Completions --------------------------------------------------------------------------


def parse_chat(body: dict[str, Any], request_chars: int) -> Conversation:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    assistants = [n for n, m in enumerate(messages) if m.get("role") == "assistant"]
    first = assistants[0] if assistants else len(messages)
    texts = [text_of(m.get("content")) for m in messages[:first] if m.get("role") == "user"]
    system = [text_of(m.get("content")) for m in messages if m.get("role") == "system"]
    after = assistants[-1] if assistants else len(messages)
    results = [text_of(m.get("content")) for m in messages[after:] if m.get("role") == "tool"]
    tools = [
        t.get("function") or {}
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]
    offered = {str(f["name"]): schema_props(f.get("parameters")) for f in tools if f.get("name")}
    conv = Conversation(
        wire="chat",
        model=body.get("model"),
        stream=bool(body.get("stream")),
        step=len(assistants),
        texts=texts,
        system="\n".join(system),
        offered=offered,
        tool_results=results,
        request_chars=request_chars,
    )
    forced = _forced_function(body.get("tool_choice"))
    if not offered:
        conv.side_call = "title"  # opencode's title call offers no tools
    elif forced is not None:
        conv.side_call = "title"  # grok's session_title call forces its only tool
        required = next((f.get("parameters") or {} for f in tools if f.get("name") == forced), {})
        args = {name: TITLE for name in required.get("required") or schema_props(required)}
        conv.forced_tool = ToolCall(forced, args)
    return conv


def _forced_function(choice: Any) -> str | None:
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        name = choice["function"].get("name")
        return str(name) if name else None
    return None


def answer_chat(conv: Conversation, reply: StepAnswer, model: str) -> FakeResponse:
    cid = f"chatcmpl-{uuid.uuid4().hex[:16]}"
    created = int(time.time())
    usage = {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    call: dict[str, Any] | None = None
    if reply.call is not None:
        call = {
            "id": f"call_{uuid.uuid4().hex[:16]}",
            "type": "function",
            "function": {"name": reply.call.name, "arguments": json.dumps(reply.call.args)},
        }
    finish = "tool_calls" if call else "stop"
    base = {"id": cid, "created": created, "model": model}
    if not conv.stream:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if call:
            message["tool_calls"] = [call]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return FakeResponse(
            200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        )
    chunk = {**base, "object": "chat.completion.chunk"}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": reply.text}]
    if call:
        name, args = call["function"]["name"], call["function"]["arguments"]
        opening = {**call, "function": {"name": name, "arguments": ""}}
        deltas.append({"tool_calls": [{"index": 0, **opening}]})
        deltas.append({"tool_calls": [{"index": 0, "function": {"arguments": args}}]})
    events: list[tuple[str | None, Any]] = [
        (None, {**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]})
        for d in deltas
    ]
    stop = {"index": 0, "delta": {}, "finish_reason": finish}
    events.append((None, {**chunk, "choices": [stop]}))
    events.append((None, {**chunk, "choices": [], "usage": usage}))
    return sse(events, done_marker=True)
