"""Reading a resource's settings from the environment, the one way every resource does it.

A secret is bound with ``dg.EnvVar`` (resolved at launch, shown in the UI by its variable's name,
never by value) and only when the variable is set, so the code location loads on a machine
with no keys at all and the resource that lacks one says which.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import dagster as dg


def secret(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``dg.EnvVar(name)`` when ``name`` is set, else ``None`` ("not configured")."""
    source = os.environ if environ is None else environ
    return dg.EnvVar(name) if source.get(name) else None


def setting(name: str, default: str = "", environ: Mapping[str, str] | None = None) -> str:
    """A plain (non-secret) setting's value, or ``default`` when unset or blank."""
    source = os.environ if environ is None else environ
    return source.get(name) or default


def listing(name: str, default: str = "", environ: Mapping[str, str] | None = None) -> list[str]:
    """A comma-separated setting as its non-empty, stripped items."""
    return [item.strip() for item in setting(name, default, environ).split(",") if item.strip()]
