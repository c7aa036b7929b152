"""Family name -> adapter factory, in the generic plugin ``Registry``; the core never names a
vendor.

Each module of ``vendors/adapters`` declares one vendor (``PLUGIN = AdapterInfo(...)``) and the
registry discovers them, so adding a vendor is one new file there. The adapter class declares
everything about its vendor (tier ids, model prefixes, binaries, rates, secret variables, token
shapes, instruction file, MCP format); the central tables (``tiers.TIERS``/``MODEL_PREFIXES``,
``cost.RATES``, the no-real-CLI guard's binaries) are derived from those declarations, and
``register`` refuses an adapter missing a piece, since each omission used to fail silently (a
pin re-routed, a turn recorded at $0, a real CLI spawned in a test).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, get_args

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Tier
from veranda_dagster.domain.core.token_shape_check import shapes_problems
from veranda_dagster.registry import Registry
from veranda_dagster.vendors.health import Rule, ordered_rules

if TYPE_CHECKING:
    from veranda_dagster.domain.core.redaction import TokenShape
    from veranda_dagster.vendors.adapters._base import CliAdapter, Install


@dataclass(frozen=True)
class AdapterInfo:
    family: str
    modes: tuple[str, ...]
    """Auth modes in this vendor's default preference order."""
    rank: int
    """Position in the default family order (lower first)."""
    factory: type[CliAdapter]
    """The adapter class: ``factory(mode, family_config, runner, login, environ)`` is the
    Backend for that mode, and its class attributes are the vendor's declarations."""


REQUIRED_PIECES = (
    "default_binary",
    "modes",
    "instruction_file",
    "mcp_format",
    "vision",
    "tiers",
    "model_prefixes",
    "rates",
    "secret_env",
    "token_patterns",
)
"""What every vendor adapter must declare (non-empty); the core derives its tables from them."""


def missing_pieces(adapter: type[CliAdapter]) -> list[str]:
    """What ``adapter`` fails to declare, in words a reader can act on; empty when complete."""
    missing = [
        name
        for name in REQUIRED_PIECES
        if getattr(adapter, name, None) is None or (name != "vision" and not getattr(adapter, name))
    ]
    tiers = getattr(adapter, "tiers", None) or {}
    tables = {"tiers": tiers} | {
        f"mode_tiers[{mode}]": t for mode, t in (getattr(adapter, "mode_tiers", None) or {}).items()
    }
    for label, table in tables.items():
        if tiers and set(table) != set(get_args(Tier)):
            missing.append(f"{label} must map exactly {', '.join(get_args(Tier))}")
    modes = getattr(adapter, "modes", None) or {}
    for mode in getattr(adapter, "mode_tiers", None) or {}:
        if mode not in modes:
            missing.append(f"mode_tiers names unknown mode {mode!r}")
    read = {
        name
        for spec in modes.values()
        for name in (*spec.required_env, *spec.any_env, *spec.optional_env)
    }
    declared = getattr(adapter, "repo_agent_config", None)
    if not isinstance(declared, tuple) or not all(isinstance(p, str) and p for p in declared):
        missing.append(
            "repo_agent_config (the project files its CLI runs code from, a tuple; () if none)"
        )
    installs = getattr(adapter, "installs", None)
    if not isinstance(installs, tuple) or not all(
        i.package and i.version and i.docker_arg for i in installs
    ):
        missing.append("installs (its exact package pins, a tuple; () if on no registry)")
    for name in getattr(adapter, "secret_env", None) or ():
        if name not in read:
            missing.append(f"secret_env {name} is read by no mode")
    for model, rate in (getattr(adapter, "rates", None) or {}).items():
        if not (rate.source and rate.date):
            missing.append(f"rate {model} names no source and date")
    missing += shapes_problems(getattr(adapter, "token_patterns", None) or ())
    return missing


VENDORS: Registry[AdapterInfo] = Registry(
    "vendor adapter",
    "veranda_dagster.vendors.adapters",
    name_of=lambda info: info.family,
    missing_pieces=lambda info: missing_pieces(info.factory),
    folders=False,
)
"""The vendors by family: each module of ``vendors/adapters`` that declares ``PLUGIN``."""


def _ranked() -> list[AdapterInfo]:
    return sorted(VENDORS.values(), key=lambda i: (i.rank, i.family))


def families() -> list[str]:
    """Registered families in default order."""
    return [i.family for i in _ranked()]


def get(family: str) -> AdapterInfo:
    try:
        return VENDORS[family]
    except KeyError:
        known = ", ".join(families())
        raise ConfigError(f"unknown backend family {family!r} (known: {known})") from None


def adapters() -> list[type[CliAdapter]]:
    """Every registered adapter class in default family order: the source of the tables."""
    return [i.factory for i in _ranked()]


def token_patterns() -> list[TokenShape]:
    """Every registered vendor's token shapes (the ``token_patterns`` table on its adapter
    class), for the one scrubber: a vendor that registers brings the shapes of its keys."""
    shapes: list[TokenShape] = []
    for adapter in adapters():
        shapes += getattr(adapter, "token_patterns", ())
    return shapes


def binaries() -> frozenset[str]:
    """Basenames of every vendor CLI a registered adapter may start (the no-real-CLI guard)."""
    return frozenset(b for a in adapters() for b in (a.default_binary, *a.also_spawns))


def installs() -> dict[str, tuple[Install, ...]]:
    """family -> the exact pins its CLI is installed from, which the image and CI must use."""
    return {a.family: tuple(a.installs) for a in adapters()}


def secret_env() -> dict[str, tuple[str, ...]]:
    """family -> the variables its keys arrive in, for the deployment and docs checks."""
    return {a.family: tuple(a.secret_env) for a in adapters()}


def health_rules(family: str) -> tuple[Rule, ...]:
    """What decides a run of ``family``: the shared rules and that family's adapter's own (only
    the shared ones for a family no adapter declares)."""
    known = family in VENDORS
    return ordered_rules(VENDORS[family].factory.health_rules if known else ())
