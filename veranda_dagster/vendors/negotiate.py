"""Capabilities are negotiated in one place, so every vendor inherits the same degradations.

Effort is normalized once (``low|medium|high``) and mapped to the vendor's own knob from the
values the vendor declares; an vendor without a knob runs at its default with a note. Images
are stripped for an vendor that declares no vision, and the turn runs text-only with a note:
never an error. The dangerous vendor is one that claims vision it lacks, so declarations are
tested per vendor.
"""

from __future__ import annotations

from veranda_dagster.domain.core.mcp_config import McpServer
from veranda_dagster.domain.core.models import Effort
from veranda_dagster.vendors.port import Capabilities, Turn


def negotiate(
    *,
    vendor: str,
    caps: Capabilities,
    prompt: str,
    workdir: str,
    model: str | None,
    effort: Effort,
    images: list[str],
    timeout_s: float,
    mcp_servers: list[McpServer] | None = None,
) -> tuple[Turn, list[str]]:
    notes: list[str] = []
    effort_value = caps.effort_values.get(effort)
    if effort_value is None:
        notes.append(f"effort {effort!r}: {vendor} has no reasoning-effort knob; CLI default used")
    kept = list(images)
    if images and not caps.vision:
        notes.append(
            f"{len(images)} image(s) stripped: {vendor} cannot see images here; ran text-only"
        )
        kept = []
    turn = Turn(
        prompt=prompt,
        workdir=workdir,
        model=model,
        effort=effort,
        effort_value=effort_value,
        images=kept,
        timeout_s=timeout_s,
        mcp_servers=list(mcp_servers or []),
    )
    return turn, notes
