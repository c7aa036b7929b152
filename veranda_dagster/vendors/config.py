"""Which backends run, in which order, with which binaries and where their keys come from.

Config never holds a secret: ``env`` maps a variable the CLI reads to the *name* of the
variable in our own environment that holds the value (Vault injects those), and the validator
rejects anything that does not look like a variable name, so a pasted key fails loudly.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from veranda_dagster.domain.core.bounds import MAX_CONFIG_FILE_BYTES
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.input_files import load_document, validate_document
from veranda_dagster.vendors import registry

CONFIG_ENV = "VERANDA_BACKENDS_CONFIG"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class FamilyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    family: str
    modes: list[str] | None = None
    """Auth modes to try, in order; None = the adapter's own default order."""
    binary: str | None = None
    """Path or name of the CLI; None = the vendor's usual binary on PATH."""
    env: dict[str, str] = Field(default_factory=dict)
    """CLI variable -> name of our variable holding its value, e.g.
    ``{"ANTHROPIC_API_KEY": "VERANDA_ANTHROPIC_KEY"}``. Names only, never values."""
    passthrough_env: list[str] = Field(default_factory=list)
    """Extra variable names passed to the CLI unchanged when set."""
    base_url: str | None = None
    """Override of the vendor API base URL (the adapter knows which variable carries it)."""
    home: str | None = None
    """This CLI's home template (settings, a login session), if any: never written by a CLI;
    each turn runs with a private copy of it (``vendors.home``), so no ticket's agent can leave
    anything there for the next."""
    timeout_s: float | None = None
    """Wall-clock cap per turn; None = the request's own timeout."""

    @field_validator("env")
    @classmethod
    def _names_only(cls, value: dict[str, str]) -> dict[str, str]:
        for key, name in value.items():
            if not _ENV_NAME.match(key) or not _ENV_NAME.match(name):
                raise ValueError(
                    f"env entry for {key[:40]!r} must map a variable name to a variable name "
                    "(never a value)"
                )
        return value

    @field_validator("passthrough_env")
    @classmethod
    def _passthrough_names(cls, value: list[str]) -> list[str]:
        bad = [v[:40] for v in value if not _ENV_NAME.match(v)]
        if bad:
            raise ValueError(f"passthrough_env holds non-names: {bad}")
        return value


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
