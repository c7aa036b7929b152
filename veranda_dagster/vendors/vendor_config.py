"""One vendor's settings in the vendors config: which auth modes, binary, variable
names, base URL, home template and time bound.

Kept apart from ``config.VendorsConfig``, which checks a whole config against the vendor
registry: every vendor is built from a ``VendorConfig``, and the registry knows the vendors.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def former_key(data: Any, key: str, former: str) -> Any:
    """``data`` with a key written under its name before the vendor rename (issue 31) moved to
    ``key``: files written for earlier releases still load, and naming both is refused."""
    if isinstance(data, dict) and former in data:
        if key in data:
            raise ValueError(f"{key!r} and its former name {former!r} are both set: keep {key!r}")
        data = {key if k == former else k: v for k, v in data.items()}
    return data


class VendorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vendor: str
    modes: list[str] | None = None
    """Auth modes to try, in order; None = the vendor's own default order."""
    binary: str | None = None
    """Path or name of the CLI; None = the vendor's usual binary on PATH."""
    env: dict[str, str] = Field(default_factory=dict)
    """CLI variable -> name of our variable holding its value, e.g.
    ``{"ANTHROPIC_API_KEY": "VERANDA_ANTHROPIC_KEY"}``. Names only, never values."""
    passthrough_env: list[str] = Field(default_factory=list)
    """Extra variable names passed to the CLI unchanged when set."""
    base_url: str | None = None
    """Override of the vendor API base URL (the vendor knows which variable carries it)."""
    home: str | None = None
    """This CLI's home template (settings, a login session), if any: never written by a CLI;
    each turn runs with a private copy of it (``vendors.home``), so no ticket's agent can leave
    anything there for the next."""
    timeout_s: float | None = None
    """Wall-clock cap per turn; None = the request's own timeout."""

    @model_validator(mode="before")
    @classmethod
    def _former_key(cls, data: Any) -> Any:
        return former_key(data, "vendor", "family")  # rename31: keep

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
