"""Tiers are the currency: a task asks for cheap/standard/high, never for a model name.

A concrete id is resolved only for the family that ends up running, so a move to another
vendor still asks for ``high`` and that vendor's own model answers. A model pinned by hand
(``model:<id>``) survives only on its own family; on a move it is dropped and the outcome says
what ran instead. Ids come from the reference notes (late 2026); rows marked [?] are judgement.
Every table here is derived from the adapters' own declarations (``CliAdapter.tiers``,
``mode_tiers``, ``model_prefixes``), in default family order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Tier
from veranda_dagster.vendors import registry

TIERS: dict[str, Mapping[Tier, str]] = {a.family: a.tiers for a in registry.adapters()}
"""family -> tier -> model id, derived from each adapter's ``tiers`` declaration."""

MODE_TIERS: dict[tuple[str, str], Mapping[Tier, str]] = {
    (a.family, mode): table for a in registry.adapters() for mode, table in a.mode_tiers.items()
}
"""A mode whose CLI names models differently (each adapter's ``mode_tiers``)."""

MODEL_PREFIXES: dict[str, tuple[str, ...]] = {
    a.family: a.model_prefixes for a in registry.adapters()
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
