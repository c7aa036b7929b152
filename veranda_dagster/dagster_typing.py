"""Dagster's generic base classes, parametrized for the type checker only.

``dg.ConfigurableResource`` is generic in the value it hands an asset (itself, for a Pythonic
resource), so ``mypy --strict`` asks for the parameter on every subclass. Subscripting it at
run time would put a second, parametrized class into every resource's MRO; this alias gives
the checker ``ConfigurableResource[Any]`` and the interpreter the plain class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import dagster as dg

if TYPE_CHECKING:
    Resource = dg.ConfigurableResource[Any]
else:
    Resource = dg.ConfigurableResource

__all__ = ["Resource"]
