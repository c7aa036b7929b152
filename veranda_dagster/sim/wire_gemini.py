"""The Gemini API (``models/<id>:generateContent`` / ``:streamGenerateContent?alt=sse``), as
Gemini CLI 0.61.0 speaks it.

A tool call is a ``functionCall`` part of a ``model`` content; its result comes back as a
``functionResponse`` part of the next ``user`` content. Before a turn the CLI asks a cheap model
to route it, with a required JSON schema (``responseJsonSchema``): that side call is answered
with the smallest object the schema accepts and never consumes a scripted reply. The seat's
prompt is the last text part of the first user content (a session-context part comes first).
"""

from __future__ import annotations

import json
from typing import Any

from veranda_dagster.sim.http_fake import FakeRequest, FakeResponse
from veranda_dagster.sim.wire import Conversation, StepAnswer, schema_props, sse

STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
MESSAGES = {
    401: "API key not valid. Please pass a valid API key.",
    429: "Resource has been exhausted (e.g. check quota).",
}


def error(status: int, message: str | None = None) -> FakeResponse:
    body = {
        "error": {
            "code": status,
            "message": message or MESSAGES.get(status, "Internal error encountered."),
            "status": STATUSES.get(status, "INTERNAL"),
        }
    }
    return FakeResponse(status, body)


def credential(request: FakeRequest) -> tuple[str, str]:
    key = request.headers.get("x-goog-api-key", "").strip() or (request.arg("key") or "")
    if key:
        return "api_key", key
    bearer = request.bearer() or ""
    return ("oauth", bearer) if bearer else ("none", "")


def _parts_text(content: Any) -> list[str]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [
        p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]


def parse(path: str, body: dict[str, Any], request_chars: int) -> Conversation:
    model = path.rsplit("/models/", 1)[-1].split(":", 1)[0] or None
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    replies = [n for n, c in enumerate(contents) if c.get("role") == "model"]
    first = replies[0] if replies else len(contents)
    texts = [t for c in contents[:first] if c.get("role", "user") == "user" for t in _parts_text(c)]
    results: list[str] = []
    if replies and contents[-1].get("role", "user") == "user":
        for part in contents[-1].get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                results.append(json.dumps(part["functionResponse"].get("response")))
    offered: dict[str, frozenset[str]] = {}
    for tool in body.get("tools") or []:
        for decl in (tool or {}).get("functionDeclarations") or []:
            if isinstance(decl, dict) and decl.get("name"):
                schema = decl.get("parametersJsonSchema") or decl.get("parameters")
                offered[str(decl["name"])] = schema_props(schema)
    gen = body.get("generationConfig") or {}
    schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
    return Conversation(
        wire="gemini",
        model=model,
        stream=":streamGenerateContent" in path,
        step=len(replies),
        texts=texts,
        system="\n".join(_parts_text(body.get("systemInstruction"))),
        offered=offered,
        tool_results=results,
        side_call="router" if isinstance(schema, dict) else None,
        schema=schema if isinstance(schema, dict) else None,
        request_chars=request_chars,
    )


def answer(conv: Conversation, reply: StepAnswer, model: str) -> FakeResponse:
    parts: list[dict[str, Any]] = []
    if reply.text or reply.call is None:
        parts.append({"text": reply.text})
    if reply.call is not None:
        parts.append({"functionCall": {"name": reply.call.name, "args": reply.call.args}})
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
        },
        "modelVersion": model,
    }
    if conv.stream:
        return sse([(None, chunk)])
    return FakeResponse(200, chunk)
