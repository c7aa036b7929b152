"""What the work phases call: an agent seat, not a vendor.

A phase says which role it needs and at which tier; the resolving implementation picks a healthy
vendor, resolves the tier to that vendor's model id, runs the turn, and returns the reply with a
``ModelCall`` recording what ran and why. Phases never import an vendor.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from veranda_dagster.domain.core.mcp_config import McpServer
from veranda_dagster.domain.core.models import Effort, ModelCall, Tier


class AgentRequest(BaseModel):
    role: str
    """implementer, test_writer, second_test_writer, reviewer, simplifier, ci_repairer, ..."""
    tier: Tier
    prompt: str
    workdir: str
    effort: Effort = "medium"
    images: list[str] = Field(default_factory=list)
    pinned_model: str | None = None
    timeout_s: float = 1800.0
    mcp_servers: list[McpServer] = Field(default_factory=list)
    """The product's tool servers for this turn (``ContextPack.mcp_servers``); the CLI is shown
    these and none of the repository's."""


class AgentReply(BaseModel):
    text: str
    call: ModelCall
    notes: list[str] = Field(default_factory=list)


@runtime_checkable
class AgentPort(Protocol):
    def run(self, request: AgentRequest) -> AgentReply: ...

    def instruction_files(self) -> list[str]:
        """Instruction filenames of every configured vendor, so the context layers reach
        whichever CLI ends up running after a fallback."""
        ...

    def mcp_formats(self) -> list[str]: ...


def role_line(seat: str) -> str:
    """The first line of a seat's prompt: a stable, machine-readable ``Role: <seat>`` line."""
    return f"Role: {seat}\n"
