"""Numeric settings read from the environment, validated in one place.

A setting that is not a finite number in range is a ``ConfigError`` naming the variable, so a
typo in a deployment fails loudly at load time instead of as a bare ``ValueError`` (or, worse,
as a ``nan`` timeout that never fires).
"""

from __future__ import annotations

import math
import os
from typing import TypeVar, overload

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
