"""Reading what each vendor request cost from the vendor's own answer, as the proxy relays it.

The credential proxy hands every answer's bytes to a ``WireTally`` as they pass. The tally
knows the four API wires the CLIs speak (Anthropic Messages, OpenAI Responses, Chat
Completions, the Gemini API), streamed (server-sent events) or not (one JSON document), and
keeps only the usage and the model each answer reports; when the answer ends, however it ends,
the usage is priced with the same rates as every turn (``cost.turn_usd``) and charged to the
turn's ``TurnMeter``, which writes the ledger. A request on a path that is no model call (a
model listing, a token count) bills nothing and is not tallied.

The usage keys per wire are this module's, not the vendors': an vendor reads its CLI's
stdout, whose usage fields are the CLI's own (Codex's ``cached_input_tokens``, Gemini CLI's
``stats``); on the wire they are the API's. Anthropic's API fields are the ones Claude Code
prints, so that row is the vendor's own.

The request body comes from the sandboxed CLI and the answer from upstream: either may be
anything, ten thousand ``[`` included, and each is parsed with ``documents.json_or_none`` (not
a document: no usage read from it) so the relay never breaks on what the meter reads.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

from veranda_dagster.domain.core.documents import json_or_none
from veranda_dagster.domain.core.models import Usage
from veranda_dagster.domain.core.spend_meter import TurnMeter
from veranda_dagster.vendors import cost, tiers
from veranda_dagster.vendors.plugins._streams import UsageKeys
from veranda_dagster.vendors.plugins.claude import ANTHROPIC_USAGE

log = logging.getLogger("veranda.spend")

MAX_METERED_JSON_BYTES: Final = 16 * 1024 * 1024
"""A non-streamed answer is parsed whole at its end; past this many bytes its usage is not
read (a model answer is a few hundred KiB at most) and the request is logged as unmetered."""
MAX_SSE_LINE_BYTES: Final = 4 * 1024 * 1024
"""One server-sent event's ``data:`` line; a longer one is skipped, not buffered."""

RESPONSES_USAGE: Final = UsageKeys(
    input="input_tokens",
    input_counts_cached=True,
    cached="input_tokens_details.cached_tokens",
    output="output_tokens",
    reasoning="output_tokens_details.reasoning_tokens",
)
CHAT_USAGE: Final = UsageKeys(
    input="prompt_tokens",
    input_counts_cached=True,
    cached="prompt_tokens_details.cached_tokens",
    output="completion_tokens",
    reasoning="completion_tokens_details.reasoning_tokens",
)
GEMINI_API_USAGE: Final = UsageKeys(
    input="promptTokenCount",
    input_counts_cached=True,
    cached="cachedContentTokenCount",
    output="candidatesTokenCount",
    reasoning="thoughtsTokenCount",
)
"""Gemini counts thinking apart from the candidates, and bills it as output."""


def wire_of(path: str) -> str | None:
    """Which API a request path belongs to, or ``None`` for one that bills nothing."""
    bare = path.split("?", 1)[0].rstrip("/")
    if bare.endswith("/messages"):
        return "anthropic"
    if bare.endswith("/responses"):
        return "responses"
    if bare.endswith("/chat/completions"):
        return "chat"
    if ":generateContent" in bare or ":streamGenerateContent" in bare:
        return "gemini"
    return None


@dataclass
class _Seen:
    """What an answer has said so far: usage objects are cumulative per answer, so the last
    one (or, for Anthropic, the start's input and the last delta's output) is the total."""

    usage: Usage | None = None
    model: str | None = None


def read_event(wire: str, event: Any, seen: _Seen) -> None:
    """Fold one JSON event (or a whole non-streamed answer) of ``wire`` into ``seen``."""
    if not isinstance(event, dict):
        return
    if wire == "anthropic":
        _anthropic(event, seen)
    elif wire == "responses":
        inner = event.get("response")
        body: dict[str, Any] = inner if isinstance(inner, dict) else event
        _take(seen, body.get("usage"), RESPONSES_USAGE, body.get("model"))
    elif wire == "chat":
        _take(seen, event.get("usage"), CHAT_USAGE, event.get("model"))
    elif wire == "gemini":
        _take(seen, event.get("usageMetadata"), GEMINI_API_USAGE, event.get("modelVersion"))
        if seen.usage is not None and event.get("usageMetadata"):
            seen.usage = replace_output(seen.usage, seen.usage.output + seen.usage.reasoning)


def replace_output(usage: Usage, output: int) -> Usage:
    return usage.model_copy(update={"output": output})


def _anthropic(event: dict[str, Any], seen: _Seen) -> None:
    kind = event.get("type")
    if kind == "message_start" and isinstance(event.get("message"), dict):
        message = event["message"]
        _take(seen, message.get("usage"), ANTHROPIC_USAGE, message.get("model"))
    elif kind == "message_delta" and isinstance(event.get("usage"), dict):
        delta = ANTHROPIC_USAGE.read(event["usage"])
        base = seen.usage or Usage()
        # the delta's counts are cumulative; a count it leaves out keeps the start's value
        seen.usage = Usage(
            input=delta.input or base.input,
            output=delta.output or base.output,
            cached=delta.cached or base.cached,
            reasoning=delta.reasoning or base.reasoning,
        )
    elif kind == "message":  # a non-streamed answer
        _take(seen, event.get("usage"), ANTHROPIC_USAGE, event.get("model"))


def _take(seen: _Seen, usage: Any, keys: UsageKeys, model: Any) -> None:
    if isinstance(usage, dict):
        seen.usage = keys.read(usage)
    if isinstance(model, str) and model:
        seen.model = model


class WireTally:
    """One answer's usage, read as its bytes pass through the proxy."""

    def __init__(self, meter: TurnMeter, wire: str, requested_model: str | None) -> None:
        self.meter = meter
        self.wire = wire
        self.seen = _Seen(model=requested_model)
        self._line = b""
        self._body = bytearray()
        self._sse: bool | None = None
        self._oversized = False
        self._finished = False

    def feed(self, chunk: bytes) -> None:
        if self._sse is None and chunk:
            head = chunk.lstrip()[:6]
            self._sse = head.startswith((b"data:", b"event:", b":", b"id:"))
        if self._sse:
            self._feed_sse(chunk)
        elif len(self._body) + len(chunk) <= MAX_METERED_JSON_BYTES:
            self._body += chunk
        else:
            self._oversized = True

    def _feed_sse(self, chunk: bytes) -> None:
        data = self._line + chunk
        *lines, self._line = data.split(b"\n")
        if len(self._line) > MAX_SSE_LINE_BYTES:
            self._line, self._oversized = b"", True
        for line in lines:
            self._sse_line(line)

    def _sse_line(self, line: bytes) -> None:
        line = line.rstrip(b"\r")
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if not payload or payload == b"[DONE]":
            return
        read_event(self.wire, json_or_none(payload), self.seen)  # not a document: skipped

    def finish(self, status: int) -> None:
        """Charge what the answer reported; an answer that reported no usage (an error, a
        refusal upstream, a stream cut before its usage) charges nothing and says so."""
        if self._finished:
            return
        self._finished = True
        if self._sse:
            self._sse_line(self._line)
        elif self._body:
            parsed = json_or_none(bytes(self._body))
            for event in parsed if isinstance(parsed, list) else [parsed]:
                read_event(self.wire, event, self.seen)
        usage, model = self.seen.usage, self.seen.model
        if usage is None:
            if status == 200 or self._oversized:
                log.warning("a %s answer (status %d) reported no usage to meter", self.wire, status)
            return
        usd = cost.turn_usd(model, usage)
        if usd is None:
            log.warning("no USD rate for model %r: a %s request metered at $0", model, self.wire)
        vendor = (tiers.vendor_of_model(model) if model else None) or self.wire
        self.meter.charge(vendor, model, usage, usd)


class WireMeter:
    """The proxy's ``RequestMeter`` for a budgeted turn: admits against the turn's caps and
    tallies every model answer into its ledger."""

    def __init__(self, meter: TurnMeter) -> None:
        self.meter = meter

    def admit(self, path: str) -> str | None:
        if wire_of(path) is None:
            return None  # a listing or a token count starts no billed work
        refusal = self.meter.admit()
        return None if refusal is None else refusal.reason

    def tally(self, path: str, body: bytes) -> WireTally | None:
        wire = wire_of(path)
        if wire is None:
            return None
        return WireTally(self.meter, wire, _requested_model(wire, path, body))


def _requested_model(wire: str, path: str, body: bytes) -> str | None:
    """The model the request named: the answer usually names it again, but a cut stream may
    not have (Gemini names it only in the path)."""
    if wire == "gemini":
        bare = path.split("?", 1)[0]
        name = bare.rsplit("/models/", 1)[-1].split(":", 1)[0] if "/models/" in bare else ""
        return name or None
    parsed = json_or_none(body) if body else None
    model = parsed.get("model") if isinstance(parsed, dict) else None
    return model if isinstance(model, str) and model else None


__all__ = ["WireMeter", "WireTally", "read_event", "wire_of"]
