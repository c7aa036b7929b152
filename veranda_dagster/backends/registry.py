"""Family name -> adapter factory. Adapters register themselves; the core never names a vendor.

``load_builtin()`` imports every module in ``backends/adapters`` (each calls ``register`` at
import), so adding a vendor is one new file there plus a row in the tier and rate tables.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from veranda_dagster.domain.errors import ConfigError

if TYPE_CHECKING:
    from veranda_dagster.backends.config import FamilyConfig
    from veranda_dagster.backends.port import Backend
    from veranda_dagster.backends.runner import CommandRunner, LoginStep
    from veranda_dagster.domain.redaction import TokenShape

BackendFactory = Callable[
    ["str", "FamilyConfig", "CommandRunner", "LoginStep", "Mapping[str, str]"], "Backend"
]
"""factory(mode, family_config, runner, login, environ) -> Backend for that mode."""


@dataclass(frozen=True)
class AdapterInfo:
    family: str
    modes: tuple[str, ...]
    """Auth modes in this vendor's default preference order."""
    rank: int
    """Position in the default family order (lower first)."""
    factory: BackendFactory


_REGISTRY: dict[str, AdapterInfo] = {}
_LOADED = False


def register(info: AdapterInfo) -> AdapterInfo:
    _REGISTRY[info.family] = info
    return info


def load_builtin() -> None:
    """Import every adapter module once so each registers itself."""
    global _LOADED
    if _LOADED:
        return
    from veranda_dagster.backends import adapters

    for mod in pkgutil.iter_modules(adapters.__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{adapters.__name__}.{mod.name}")
    _LOADED = True


def families() -> list[str]:
    """Registered families in default order."""
    load_builtin()
    return [i.family for i in sorted(_REGISTRY.values(), key=lambda i: (i.rank, i.family))]


def get(family: str) -> AdapterInfo:
    load_builtin()
    try:
        return _REGISTRY[family]
    except KeyError:
        known = ", ".join(families())
        raise ConfigError(f"unknown backend family {family!r} (known: {known})") from None


def token_patterns() -> list[TokenShape]:
    """Every registered vendor's token shapes (the ``token_patterns`` table on its adapter
    class), for the one scrubber: a vendor that registers brings the shapes of its keys."""
    load_builtin()
    shapes: list[TokenShape] = []
    for info in sorted(_REGISTRY.values(), key=lambda i: (i.rank, i.family)):
        shapes += getattr(info.factory, "token_patterns", ())
    return shapes
