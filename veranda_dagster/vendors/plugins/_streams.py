"""Reading a vendor CLI's JSON-lines stream: the mechanics every parser shares, written once.

A vendor's parser keeps only what its CLI does differently: its event names, where its text
and session live, how it reports an error, and which of its usage keys holds which count
(a ``UsageKeys`` row). The rest is here: one JSON object a line or a typed
``StreamParseError``, the event count, the usage arithmetic (our ``input`` is uncached input
plus cache writes, which bill like input) and the check that a stream reached its terminal
event.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from veranda_dagster.domain.core.models import Usage
from veranda_dagster.vendors.port import StreamParseError


class StreamSummary(BaseModel):
    """What a vendor stream said, normalized (``usage.input`` = uncached input)."""

    text: str = ""
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    terminal: bool = False
    error: str | None = None
    session_id: str | None = None
    cost_usd: float | None = None
    events: int = 0

    def read_events(self, stdout: str, vendor: str) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Each event of the stream with its ``type``, counted here (a truncation names how
        many came)."""
        for event in json_lines(stdout, vendor):
            self.events += 1
            yield event.get("type"), event

    def require_terminal(self, vendor: str, terminal_name: str) -> StreamSummary:
        """This summary, unless the stream ended without its terminal event or an error."""
        if not self.terminal and self.error is None:
            raise StreamParseError(
                f"{vendor} stream truncated: {self.events} event(s), no {terminal_name} event"
            )
        return self


def json_lines(stdout: str, vendor: str) -> Iterator[dict[str, Any]]:
    """Each non-blank line as a JSON object; anything else is a typed ``StreamParseError``."""
    for n, raw in enumerate(stdout.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise StreamParseError(
                f"{vendor} stream line {n} is not JSON ({exc.msg}): {line[:80]!r}"
            ) from exc
        except RecursionError:  # ten thousand ``[``: the decoder's recursion, not a crash
            raise StreamParseError(
                f"{vendor} stream line {n} nests deeper than JSON is read: {line[:80]!r}"
            ) from None
        if not isinstance(obj, dict):
            raise StreamParseError(f"{vendor} stream line {n} is not an object: {line[:80]!r}")
        yield obj


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class UsageKeys:
    """Which of a vendor's usage keys holds each count, in the order ``input, output, cached,
    cache_write, reasoning``; a dotted key reads a nested object (``cache.read``). A key the
    vendor does not report is ``None`` and counts 0."""

    input: str
    output: str
    cached: str | None = None
    cache_write: str | None = None
    """Tokens written to the prompt cache: billed like input, so added to it."""
    reasoning: str | None = None
    input_counts_cached: bool = False
    """The vendor's input figure includes the cache reads, which are taken off it."""

    def read(self, usage: Mapping[str, Any]) -> Usage:
        cached = _count(usage, self.cached)
        given = _count(usage, self.input)
        uncached = max(given - cached, 0) if self.input_counts_cached else given
        return Usage(
            input=uncached + _count(usage, self.cache_write),
            output=_count(usage, self.output),
            cached=cached,
            reasoning=_count(usage, self.reasoning),
        )


def _count(usage: Mapping[str, Any], key: str | None) -> int:
    if key is None:
        return 0
    value: Any = usage
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return as_int(value)


def text_blocks(message: Mapping[str, Any] | None) -> list[str]:
    """The text of an Anthropic-shaped message's ``text`` content blocks (Claude Code's and
    Cursor's ``assistant`` events carry one)."""
    content = (message or {}).get("content") or []
    return [c.get("text", "") for c in content if c.get("type") == "text"]


def model_names(per_model: Mapping[str, Any] | None) -> list[str]:
    """The model ids a per-model usage breakdown (``modelUsage``, ``stats.models``) names."""
    return list((per_model or {}).keys())
