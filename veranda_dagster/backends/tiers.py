"""Tiers are the currency: a task asks for cheap/standard/high, never for a model name.

A concrete id is resolved only for the family that ends up running, so a move to another
vendor still asks for ``high`` and that vendor's own model answers. A model pinned by hand
(``model:<id>``) survives only on its own family; on a move it is dropped and the outcome says
what ran instead. Ids come from the reference notes (late 2026); rows marked [?] are judgement.
"""

from __future__ import annotations

from dataclasses import dataclass

from veranda_dagster.domain.errors import ConfigError
from veranda_dagster.domain.models import Tier

TIERS: dict[str, dict[Tier, str]] = {
    # Claude Code aliases resolve per provider (API, Bedrock, Vertex), so a mode switch keeps
    # the model without a per-cloud id table.
    "claude": {"cheap": "haiku", "standard": "sonnet", "high": "opus"},
    "codex": {"cheap": "gpt-6-luna", "standard": "gpt-5.3-codex", "high": "gpt-5.5"},  # [?]
    "gemini": {
        "cheap": "gemini-3.5-flash-lite",
        "standard": "gemini-3.8-flash",
        "high": "gemini-3.1-pro-preview",
    },
    "kimi": {"cheap": "kimi-k2.6", "standard": "kimi-k2.7-code", "high": "kimi-k3"},
    "grok": {"cheap": "grok-4.3", "standard": "grok-4.5", "high": "grok-4.7"},  # cheap [?]
    "glm": {"cheap": "glm-5.3-flash", "standard": "glm-5.3", "high": "glm-5.3"},
    "cursor": {"cheap": "composer-2.5", "standard": "composer-2.5", "high": "gpt-5.5"},
}

MODE_TIERS: dict[tuple[str, str], dict[Tier, str]] = {
    # Kimi Code OAuth serves plan aliases, not the open-platform ids.
    ("kimi", "login"): {
        "cheap": "kimi-code/kimi-for-coding-highspeed",
        "standard": "kimi-code/kimi-for-coding",
        "high": "kimi-code/k3",
    },
    # opencode names provider/model.
    ("glm", "opencode"): {
        "cheap": "zai-coding-plan/glm-5.3-flash",
        "standard": "zai-coding-plan/glm-5.3",
        "high": "zai-coding-plan/glm-5.3",
    },
}

MODEL_PREFIXES: dict[str, tuple[str, ...]] = {
    "claude": ("claude-", "anthropic.", "us.anthropic.", "opus", "sonnet", "haiku"),
    "codex": ("gpt-", "o3", "o4", "codex-"),
    "gemini": ("gemini-",),
    "kimi": ("kimi-", "kimi-code/", "moonshot"),
    "grok": ("grok-",),
    "glm": ("glm-", "zai-coding-plan/", "zai/"),
    "cursor": ("composer-", "auto"),
}
"""Which family owns a pinned id; checked after the exact tier tables."""


def resolve(family: str, tier: Tier, mode: str | None = None) -> str:
    table = MODE_TIERS.get((family, mode or "")) or TIERS.get(family)
    if table is None:
        raise ConfigError(f"no tier table for backend family {family!r}")
    return table[tier]


def family_of_model(model_id: str) -> str | None:
    """The family a pinned model id belongs to, or None if no family claims it."""
    mid = model_id.strip().lower()
    for fam, table in TIERS.items():
        if mid in (m.lower() for m in table.values()):
            return fam
    for (fam, _mode), table in MODE_TIERS.items():
        if mid in (m.lower() for m in table.values()):
            return fam
    for fam, prefixes in MODEL_PREFIXES.items():
        if any(mid.startswith(p) for p in prefixes):
            return fam
    return None


@dataclass(frozen=True)
class ModelChoice:
    model: str
    dropped_pin: str | None = None
    note: str | None = None


def choose_model(
    family: str, mode: str, tier: Tier, pinned: str | None, pin_family: str | None
) -> ModelChoice:
    """The model a family runs: the pin on its own family, otherwise the tier's id.

    ``pin_family`` is the family that owns the pin (the caller decides it once per request).
    """
    if pinned and pin_family == family:
        return ModelChoice(model=pinned, note="pinned")
    model = resolve(family, tier, mode)
    if pinned:
        return ModelChoice(
            model=model,
            dropped_pin=pinned,
            note=f"pinned model {pinned} dropped on move to {family}/{mode}; ran {model} ({tier})",
        )
    return ModelChoice(model=model)
