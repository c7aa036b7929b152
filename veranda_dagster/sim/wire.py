"""What the scripted model server needs from any vendor wire format, and what it answers.

Each wire module (``wire_anthropic``, ``wire_openai``, ``wire_gemini``) reads a request into a
``Conversation`` (who is asking, how far into its turn, which tools it offers, whether it
streams) and writes a ``StepAnswer`` back in that vendor's shape, streamed as server-sent
events when the client asked. The server itself never looks at a vendor field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from veranda_dagster.sim.http_fake import FakeResponse
from veranda_dagster.sim.renderers import OfferedTools, ToolCall

CHARS_PER_TOKEN = 4
"""The fake's tokenizer: about four characters a token, deterministic."""


@dataclass
class Conversation:
    wire: str
    model: str | None
    stream: bool
    step: int
    """Assistant turns (or function-call items) already in the request: 0 = a turn starts."""
    texts: list[str]
    """The user's text of the conversation's first turn, where the seat's ``Role:`` line is."""
    system: str = ""
    offered: OfferedTools = field(default_factory=dict)
    tool_results: list[str] = field(default_factory=list)
    """What the tools the model called last returned, as the CLI sends it back."""
    history: list[str] = field(default_factory=list)
    """Every tool result of the turn so far, oldest first (what the seat has seen; a wire
    that does not read it leaves it empty, and placeholders then say "not seen")."""
    side_call: str | None = None
    """Why this request is not part of a seat's turn (a title or router call), or None."""
    forced_tool: ToolCall | None = None
    """A side call that forces one tool (Grok's ``session_title``): the call to answer with."""
    schema: dict[str, Any] | None = None
    """A side call's required JSON schema (Gemini's router), to answer a minimal object."""
    request_chars: int = 0

    @property
    def prompt(self) -> str:
        return "\n".join(self.texts)


@dataclass
class StepAnswer:
    text: str = ""
    call: ToolCall | None = None
    input_tokens: int = 1
    output_tokens: int = 1

    @classmethod
    def costed(cls, conv: Conversation, text: str, call: ToolCall | None) -> StepAnswer:
        out = len(text) + (len(json.dumps(call.args)) if call else 0)
        return cls(
            text=text,
            call=call,
            input_tokens=max(1, conv.request_chars // CHARS_PER_TOKEN),
            output_tokens=max(1, out // CHARS_PER_TOKEN),
        )


def sse(events: list[tuple[str | None, Any]], done_marker: bool = False) -> FakeResponse:
    """Server-sent events, one ``data:`` line each (named when a name is given)."""
    chunks = [(f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
              for name, data in events]  # fmt: skip
    if done_marker:
        chunks.append("data: [DONE]\n\n")
    return FakeResponse(200, "".join(chunks).encode(), content_type="text/event-stream")


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return ""


def schema_props(schema: Any) -> frozenset[str]:
    if not isinstance(schema, dict):
        return frozenset()
    return frozenset((schema.get("properties") or {}).keys())


def from_schema(schema: dict[str, Any]) -> Any:
    """The smallest value a JSON schema accepts (first enum value, 1, "sim", ...)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: from_schema(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "sim"
