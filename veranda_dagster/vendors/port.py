"""The port every vendor CLI vendor implements: exactly three operations.

``capabilities`` (what it declares it can do), ``probe()`` (a real cheap call naming no model)
and ``run(turn)`` (one headless turn in a working directory). Everything else a vendor does
differently stays inside its vendor: widening this interface is how an abstraction starts lying.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from veranda_dagster.domain.core.errors import InputError, VerandaError
from veranda_dagster.domain.core.mcp_config import McpServer
from veranda_dagster.domain.core.models import Effort, Usage

Verdict = Literal["ok", "quota", "auth", "turn_failed", "upstream", "unreachable", "timeout"]
"""``timeout``: the CLI was still working when its time bound killed it. Not a health problem
(the vendor answered), not a reason to move to another vendor (it would spend another bound
the same way), and not retryable: the bound is the budget."""


class Capabilities(BaseModel):
    """What an vendor declares; the negotiation layer degrades on it in one place."""

    model_config = ConfigDict(frozen=True)

    vision: bool
    instruction_file: str
    mcp_format: str
    effort_knob: str | None = None
    model_flag: str | None = "--model"
    effort_values: dict[str, str] = Field(default_factory=dict)
    """Normalized effort (low|medium|high) -> this vendor's own value; empty = no knob."""


class Turn(BaseModel):
    """One headless turn, already negotiated: effort normalized, images stripped if needed."""

    prompt: str
    workdir: str
    model: str | None = None
    effort: Effort = "medium"
    images: list[str] = Field(default_factory=list)
    timeout_s: float = 1800.0
    effort_value: str | None = None
    """The vendor's own knob value for ``effort``, set once by negotiation (None = no knob)."""
    mcp_servers: list[McpServer] = Field(default_factory=list)
    """The product's own tool servers for this turn (the browser for a frontend ticket): the
    only MCP servers the CLI sees, never written into the clone."""


class TurnResult(BaseModel):
    text: str
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    events: int = 0
    notes: list[str] = Field(default_factory=list)
    cost_usd: float | None = None
    """The vendor's own cost figure, set only by vendors whose CLI prices correctly (Claude
    Code on Anthropic, Grok's server-stamped cost); used when our rate table has no row."""


class HealthVerdict(BaseModel):
    verdict: Verdict
    detail: str = ""
    rule: str | None = None
    """Which classifier rule decided it (e.g. ``auth:claude_api_error_status``), for audits."""


@runtime_checkable
class Vendor(Protocol):
    """A vendor CLI in one auth mode (e.g. claude/api_key, claude/bedrock)."""

    @property
    def vendor(self) -> str: ...

    @property
    def mode(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def probe(self) -> HealthVerdict: ...

    def run(self, turn: Turn) -> TurnResult: ...


class VendorError(VerandaError):
    """A turn failed; ``verdict`` says how, so the resolver can decide to fall back."""

    def __init__(self, verdict: Verdict, detail: str) -> None:
        self.verdict = verdict
        self.detail = detail
        super().__init__(f"{verdict}: {detail}")

    @property
    def retryable(self) -> bool:  # type: ignore[override]
        return self.verdict in ("upstream", "unreachable")


class StreamParseError(InputError):
    """A vendor stream could not be parsed (garbage, truncated, wrong shape)."""


class NoHealthyVendorError(VerandaError):
    """Every configured vendor was tried and none could serve the turn."""
