"""Settings read from the environment, the one way every resource, source and forge reads them.

A secret is bound with ``dg.EnvVar`` (``secret``: resolved at launch, shown in the UI by its
variable's name, never by value) and only when the variable is set, so the code location loads
on a machine with no keys at all and the resource that lacks one says which.

Numbers are validated in one place (``env_number``).

A setting that is not a finite number in range is a ``ConfigError`` naming the variable, so a
typo in a deployment fails loudly at load time instead of as a bare ``ValueError`` (or, worse,
as a ``nan`` timeout that never fires).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar, overload

import dagster as dg

from veranda_dagster.domain.core.errors import ConfigError

N = TypeVar("N", int, float)


@overload
def env_number(name: str, default: N, kind: type[N], *, allow_zero: bool = False) -> N: ...


@overload
def env_number(
    name: str, default: None, kind: type[N], *, allow_zero: bool = False
) -> N | None: ...


def env_number(
    name: str, default: N | None, kind: type[N], *, allow_zero: bool = False
) -> N | None:
    """``name`` parsed as ``kind``, or ``default`` when unset or blank.

    Values must be finite and positive (``>= 0`` with ``allow_zero``)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a {kind.__name__}") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name}={raw!r} must be a finite number")
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ConfigError(f"{name}={raw!r} must be {bound}")
    return value


def secret(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``dg.EnvVar(name)`` when ``name`` is set, else ``None`` ("not configured")."""
    source = os.environ if environ is None else environ
    return dg.EnvVar(name) if source.get(name) else None


FORMER_NAMES: dict[str, str] = {
    "VERANDA_VENDORS_FILE": "VERANDA_BACKENDS_FILE",  # rename31: keep
}
"""Setting -> the name it had before the vendor rename (issue 31). Deployments set the former
name, so it is still read when the new one is unset; the new name wins when both are set."""


def setting(name: str, default: str = "", environ: Mapping[str, str] | None = None) -> str:
    """A plain (non-secret) setting's value, or ``default`` when unset or blank (a setting that
    was renamed is also read under its former name, ``FORMER_NAMES``)."""
    source = os.environ if environ is None else environ
    former = FORMER_NAMES.get(name)
    return source.get(name) or (source.get(former) if former else None) or default


def listing(name: str, default: str = "", environ: Mapping[str, str] | None = None) -> list[str]:
    """A comma-separated setting as its non-empty, stripped items."""
    return [item.strip() for item in setting(name, default, environ).split(",") if item.strip()]


def default_workspace_root() -> str:
    """Where the per-ticket clones live when no root is configured: ``$DAGSTER_HOME/workspaces``
    (read by the workspace resource and by the metrics that gauge the folder)."""
    home = os.environ.get("DAGSTER_HOME")
    return str(Path(home) / "workspaces") if home else str(Path(".veranda") / "workspaces")
