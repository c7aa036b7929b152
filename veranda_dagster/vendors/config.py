"""Which backends run, in which order, with which binaries and where their keys come from.

Config never holds a secret: ``env`` maps a variable the CLI reads to the *name* of the
variable in our own environment that holds the value (Vault injects those), and the validator
rejects anything that does not look like a variable name, so a pasted key fails loudly.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from veranda_dagster.domain.core.bounds import MAX_CONFIG_FILE_BYTES
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.input_files import load_document, validate_document
from veranda_dagster.vendors import registry
from veranda_dagster.vendors.family_config import FamilyConfig

CONFIG_ENV = "VERANDA_BACKENDS_CONFIG"


def _default_families() -> list[FamilyConfig]:
    return [FamilyConfig(family=f) for f in registry.families()]


class BackendsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    families: list[FamilyConfig] = Field(default_factory=_default_families)
    """Fallback order: first is preferred."""
    probe_timeout_s: float = 60.0

    @field_validator("families")
    @classmethod
    def _known_unique(cls, value: list[FamilyConfig]) -> list[FamilyConfig]:
        seen: set[str] = set()
        for fam in value:
            info = registry.get(fam.family)  # ConfigError names the unknown family
            if fam.family in seen:
                raise ValueError(f"family {fam.family!r} listed twice")
            seen.add(fam.family)
            for mode in fam.modes or []:
                if mode not in info.modes:
                    raise ValueError(
                        f"family {fam.family!r} has no mode {mode!r} (modes: {list(info.modes)})"
                    )
        if not value:
            raise ValueError("families must list at least one backend")
        return value

    def modes_of(self, family: FamilyConfig) -> list[str]:
        return list(family.modes or registry.get(family.family).modes)

    def family(self, name: str) -> FamilyConfig | None:
        return next((f for f in self.families if f.family == name), None)

    @classmethod
    def load(cls, path: str | Path | None = None) -> BackendsConfig:
        """Load JSON or YAML from ``path`` (or ``$VERANDA_BACKENDS_CONFIG``); default if neither."""
        if path is None:
            path = os.environ.get(CONFIG_ENV) or None
        if path is None:
            return cls()
        p = Path(path)
        data = load_document(
            p, what="backends config", max_bytes=MAX_CONFIG_FILE_BYTES, error=ConfigError
        )
        return validate_document(cls, data or {}, f"backends config {p}", ConfigError)
