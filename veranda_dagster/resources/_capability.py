"""Lazy binding to domain entry points that may not be built yet.

An asset must never fake a phase it cannot run, so a missing module or function becomes a
``MissingCapabilityError`` naming the capability; an import that fails *inside* an existing
module (a real bug) propagates unchanged.
"""

from __future__ import annotations

import importlib
from typing import Any

from veranda_dagster.domain.errors import MissingCapabilityError


def require(module: str, attr: str, capability: str) -> Any:
    """``module.attr``, or ``MissingCapabilityError(capability)`` if either does not exist."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module == missing or module.startswith(f"{missing}.")):
            raise MissingCapabilityError(capability, f"{module} is not built yet") from None
        raise
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise MissingCapabilityError(capability, f"{module}.{attr} is not built yet") from None
