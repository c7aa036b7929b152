"""Which vendors run, in which order, with which binaries and where their keys come from.

Config never holds a secret: ``env`` maps a variable the CLI reads to the *name* of the
variable in our own environment that holds the value (Vault injects those), and the validator
rejects anything that does not look like a variable name, so a pasted key fails loudly.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from veranda_dagster.domain.core.bounds import MAX_CONFIG_FILE_BYTES
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.input_files import load_document, validate_document
from veranda_dagster.vendors import registry
from veranda_dagster.vendors.vendor_config import VendorConfig, former_key

CONFIG_ENV = "VERANDA_VENDORS_CONFIG"
FORMER_CONFIG_ENV = "VERANDA_BACKENDS_CONFIG"  # rename31: keep
"""The name before the vendor rename (issue 31): still read when ``CONFIG_ENV`` is unset."""


def _default_vendors() -> list[VendorConfig]:
    return [VendorConfig(vendor=f) for f in registry.vendors()]


class VendorsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vendors: list[VendorConfig] = Field(default_factory=_default_vendors)
    """Fallback order: first is preferred."""
    probe_timeout_s: float = 60.0

    @model_validator(mode="before")
    @classmethod
    def _former_key(cls, data: Any) -> Any:
        return former_key(data, "vendors", "families")  # rename31: keep

    @field_validator("vendors")
    @classmethod
    def _known_unique(cls, value: list[VendorConfig]) -> list[VendorConfig]:
        seen: set[str] = set()
        for fam in value:
            info = registry.get(fam.vendor)  # ConfigError names the unknown vendor
            if fam.vendor in seen:
                raise ValueError(f"vendor {fam.vendor!r} listed twice")
            seen.add(fam.vendor)
            for mode in fam.modes or []:
                if mode not in info.modes:
                    raise ValueError(
                        f"vendor {fam.vendor!r} has no mode {mode!r} (modes: {list(info.modes)})"
                    )
        if not value:
            raise ValueError("vendors must list at least one vendor")
        return value

    def modes_of(self, vendor: VendorConfig) -> list[str]:
        return list(vendor.modes or registry.get(vendor.vendor).modes)

    def vendor(self, name: str) -> VendorConfig | None:
        return next((f for f in self.vendors if f.vendor == name), None)

    @classmethod
    def load(cls, path: str | Path | None = None) -> VendorsConfig:
        """Load JSON or YAML from ``path`` (or ``$VERANDA_VENDORS_CONFIG``); default if neither."""
        if path is None:
            path = os.environ.get(CONFIG_ENV) or os.environ.get(FORMER_CONFIG_ENV) or None
        if path is None:
            return cls()
        p = Path(path)
        data = load_document(
            p, what="vendors config", max_bytes=MAX_CONFIG_FILE_BYTES, error=ConfigError
        )
        return validate_document(cls, data or {}, f"vendors config {p}", ConfigError)
