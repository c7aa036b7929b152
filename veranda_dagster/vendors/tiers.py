"""Tiers are the currency: a task asks for cheap/standard/high, never for a model name.

A concrete id is resolved only for the vendor that ends up running, so a move to another
vendor still asks for ``high`` and that vendor's own model answers. A model pinned by hand
(``model:<id>``) survives only on its own vendor; on a move it is dropped and the outcome says
what ran instead. Ids come from the reference notes (late 2026); rows marked [?] are judgement.
Every table here is derived from the vendors' own declarations (``CliVendor.tiers``,
``mode_tiers``, ``model_prefixes``), in default vendor order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Tier
from veranda_dagster.vendors import registry

TIERS: dict[str, Mapping[Tier, str]] = {a.vendor: a.tiers for a in registry.vendor_classes()}
"""vendor -> tier -> model id, derived from each vendor's ``tiers`` declaration."""

MODE_TIERS: dict[tuple[str, str], Mapping[Tier, str]] = {
    (a.vendor, mode): table
    for a in registry.vendor_classes()
    for mode, table in a.mode_tiers.items()
}
"""A mode whose CLI names models differently (each vendor's ``mode_tiers``)."""

MODEL_PREFIXES: dict[str, tuple[str, ...]] = {
    a.vendor: a.model_prefixes for a in registry.vendor_classes()
}
"""Which vendor owns a pinned id; checked after the exact tier tables."""


def resolve(vendor: str, tier: Tier, mode: str | None = None) -> str:
    table = MODE_TIERS.get((vendor, mode or "")) or TIERS.get(vendor)
    if table is None:
        raise ConfigError(f"no tier table for vendor {vendor!r}")
    return table[tier]


def vendor_of_model(model_id: str) -> str | None:
    """The vendor a pinned model id belongs to, or None if no vendor claims it."""
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
    vendor: str, mode: str, tier: Tier, pinned: str | None, pin_vendor: str | None
) -> ModelChoice:
    """The model a vendor runs: the pin on its own vendor, otherwise the tier's id.

    ``pin_vendor`` is the vendor that owns the pin (the caller decides it once per request).
    """
    if pinned and pin_vendor == vendor:
        return ModelChoice(model=pinned, note="pinned")
    model = resolve(vendor, tier, mode)
    if pinned:
        return ModelChoice(
            model=model,
            dropped_pin=pinned,
            note=f"pinned model {pinned} dropped on move to {vendor}/{mode}; ran {model} ({tier})",
        )
    return ModelChoice(model=model)
