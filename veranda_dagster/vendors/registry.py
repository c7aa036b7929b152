"""Vendor name -> vendor factory, in the generic plugin ``Registry``; the core never names a
vendor.

Each module of ``vendors/plugins`` declares one vendor (``PLUGIN = VendorInfo(...)``) and the
registry discovers them, so adding a vendor is one new file there. The vendor class declares
everything about its vendor (tier ids, model prefixes, binaries, rates, secret variables, token
shapes, instruction file, MCP format); the central tables (``tiers.TIERS``/``MODEL_PREFIXES``,
``cost.RATES``, the no-real-CLI guard's binaries) are derived from those declarations, and
``register`` refuses an vendor missing a piece, since each omission used to fail silently (a
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
    from veranda_dagster.vendors.plugins._base import CliVendor, Install


@dataclass(frozen=True)
class VendorInfo:
    vendor: str
    modes: tuple[str, ...]
    """Auth modes in this vendor's default preference order."""
    rank: int
    """Position in the default vendor order (lower first)."""
    factory: type[CliVendor]
    """The vendor class: ``factory(mode, vendor_config, runner, login, environ)`` is the
    Vendor for that mode, and its class attributes are the vendor's declarations."""


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
"""What every vendor must declare (non-empty); the core derives its tables from them."""


def missing_pieces(vendor: type[CliVendor]) -> list[str]:
    """What ``vendor`` fails to declare, in words a reader can act on; empty when complete."""
    missing = [
        name
        for name in REQUIRED_PIECES
        if getattr(vendor, name, None) is None or (name != "vision" and not getattr(vendor, name))
    ]
    tiers = getattr(vendor, "tiers", None) or {}
    tables = {"tiers": tiers} | {
        f"mode_tiers[{mode}]": t for mode, t in (getattr(vendor, "mode_tiers", None) or {}).items()
    }
    for label, table in tables.items():
        if tiers and set(table) != set(get_args(Tier)):
            missing.append(f"{label} must map exactly {', '.join(get_args(Tier))}")
    modes = getattr(vendor, "modes", None) or {}
    for mode in getattr(vendor, "mode_tiers", None) or {}:
        if mode not in modes:
            missing.append(f"mode_tiers names unknown mode {mode!r}")
    read = {
        name
        for spec in modes.values()
        for name in (*spec.required_env, *spec.any_env, *spec.optional_env)
    }
    declared = getattr(vendor, "repo_agent_config", None)
    if not isinstance(declared, tuple) or not all(isinstance(p, str) and p for p in declared):
        missing.append(
            "repo_agent_config (the project files its CLI runs code from, a tuple; () if none)"
        )
    installs = getattr(vendor, "installs", None)
    if not isinstance(installs, tuple) or not all(
        i.package and i.version and i.docker_arg for i in installs
    ):
        missing.append("installs (its exact package pins, a tuple; () if on no registry)")
    for name in getattr(vendor, "secret_env", None) or ():
        if name not in read:
            missing.append(f"secret_env {name} is read by no mode")
    for model, rate in (getattr(vendor, "rates", None) or {}).items():
        if not (rate.source and rate.date):
            missing.append(f"rate {model} names no source and date")
    missing += shapes_problems(getattr(vendor, "token_patterns", None) or ())
    return missing


VENDORS: Registry[VendorInfo] = Registry(
    "vendor",
    "veranda_dagster.vendors.plugins",
    name_of=lambda info: info.vendor,
    missing_pieces=lambda info: missing_pieces(info.factory),
    folders=False,
)
"""The vendors by vendor: each module of ``vendors/plugins`` that declares ``PLUGIN``."""


def _ranked() -> list[VendorInfo]:
    return sorted(VENDORS.values(), key=lambda i: (i.rank, i.vendor))


def vendors() -> list[str]:
    """Registered vendors in default order."""
    return [i.vendor for i in _ranked()]


def get(vendor: str) -> VendorInfo:
    try:
        return VENDORS[vendor]
    except KeyError:
        known = ", ".join(vendors())
        raise ConfigError(f"unknown vendor {vendor!r} (known: {known})") from None


def vendor_classes() -> list[type[CliVendor]]:
    """Every registered vendor class in default vendor order: the source of the tables."""
    return [i.factory for i in _ranked()]


def token_patterns() -> list[TokenShape]:
    """Every registered vendor's token shapes (the ``token_patterns`` table on its vendor
    class), for the one scrubber: a vendor that registers brings the shapes of its keys."""
    shapes: list[TokenShape] = []
    for vendor in vendor_classes():
        shapes += getattr(vendor, "token_patterns", ())
    return shapes


def binaries() -> frozenset[str]:
    """Basenames of every vendor CLI a registered vendor may start (the no-real-CLI guard)."""
    return frozenset(b for a in vendor_classes() for b in (a.default_binary, *a.also_spawns))


def installs() -> dict[str, tuple[Install, ...]]:
    """vendor -> the exact pins its CLI is installed from, which the image and CI must use."""
    return {a.vendor: tuple(a.installs) for a in vendor_classes()}


def secret_env() -> dict[str, tuple[str, ...]]:
    """vendor -> the variables its keys arrive in, for the deployment and docs checks."""
    return {a.vendor: tuple(a.secret_env) for a in vendor_classes()}


def health_rules(vendor: str) -> tuple[Rule, ...]:
    """What decides a run of ``vendor``: the shared rules and that vendor's own (only
    the shared ones for a name no vendor declares)."""
    known = vendor in VENDORS
    return ordered_rules(VENDORS[vendor].factory.health_rules if known else ())
