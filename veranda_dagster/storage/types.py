"""Which pydantic model each asset stores, so a value loads back as its own type."""

from __future__ import annotations

from pydantic import BaseModel

from veranda_dagster.domain.core.phases import PHASES

VALUE_TYPES: dict[str, type[BaseModel]] = {name: p.value_type for name, p in PHASES.items()}
"""Derived from the phase registry (``domain.core.phases``)."""


def value_type(asset: str) -> type[BaseModel] | None:
    return VALUE_TYPES.get(asset)
