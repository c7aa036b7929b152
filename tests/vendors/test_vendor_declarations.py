"""Each vendor declares everything about itself on its vendor; the central tables are derived,
a vendor missing a piece is refused loudly, and every vendor's secret variables reach the
deployment (Helm's Vault templates) and the README's configuration table."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from tests.support.plugins import scratch
from tests.support.secret_docs import readme_secret_rows
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Tier
from veranda_dagster.vendors import cost, registry, runner, tiers
from veranda_dagster.vendors.plugins._base import CliVendor, Install, ModeSpec
from veranda_dagster.vendors.plugins.claude import ClaudeVendor
from veranda_dagster.vendors.rates import models_dev

VENDORS = registry.vendors()


class Acme(CliVendor):
    """A complete eighth vendor, declared the way a new vendor module would."""

    vendor = "acme"
    default_binary = "acme-code"
    also_spawns = ("acme",)
    modes: ClassVar[dict[str, ModeSpec]] = {
        "api_key": ModeSpec("api_key", required_env=("ACME_API_KEY",))
    }
    instruction_file = "AGENTS.md"
    mcp_format = "mcp_json"
    vision = False
    tiers: ClassVar[dict[Tier, str]] = {"cheap": "acme-1", "standard": "acme-2", "high": "acme-3"}
    model_prefixes = ("acme-",)
    rates: ClassVar[dict[str, Any]] = {"acme-3": models_dev(1, 2, 0.1)}
    secret_env = ("ACME_API_KEY",)
    token_patterns = ClaudeVendor.token_patterns[:1]
    repo_agent_config = (".acme",)
    installs = (Install("npm", "@acme/acme-code", "1.0.0", "ACME_CODE_VERSION"),)


@pytest.mark.parametrize("vendor", VENDORS)
def test_every_builtin_vendor_declares_every_piece(vendor: str) -> None:
    assert registry.missing_pieces(registry.get(vendor).factory) == []


@pytest.mark.parametrize(
    ("drop", "expected"),
    [
        ("tiers", "tiers"),
        ("model_prefixes", "model_prefixes"),
        ("rates", "rates"),
        ("secret_env", "secret_env"),
        ("default_binary", "default_binary"),
        ("instruction_file", "instruction_file"),
        ("mcp_format", "mcp_format"),
        ("token_patterns", "token_patterns"),
    ],
)
def test_a_vendor_missing_a_piece_is_refused_at_registration(drop: str, expected: str) -> None:
    incomplete = type("Incomplete", (Acme,), {drop: ()})
    with pytest.raises(ConfigError, match=rf"'acme' is incomplete: .*\b{expected}\b"):
        registry.VENDORS.register(registry.VendorInfo("acme", ("api_key",), 99, incomplete))
    assert "acme" not in registry.vendors()


def test_a_vendor_that_does_not_declare_its_repo_agent_config_is_refused() -> None:
    """Not declaring which project files run code is refused; ``()`` is a declaration."""
    undeclared = type("Undeclared", (Acme,), {})
    del Acme.repo_agent_config
    try:
        with pytest.raises(ConfigError, match=r"'acme' is incomplete: .*repo_agent_config"):
            registry.VENDORS.register(registry.VendorInfo("acme", ("api_key",), 99, undeclared))
    finally:
        Acme.repo_agent_config = (".acme",)
    listed = type("Listed", (Acme,), {"repo_agent_config": [".acme"]})  # not a tuple
    assert any("repo_agent_config" in m for m in registry.missing_pieces(listed))
    blank = type("Blank", (Acme,), {"repo_agent_config": ("",)})
    assert any("repo_agent_config" in m for m in registry.missing_pieces(blank))
    reads_none = type("ReadsNone", (Acme,), {"repo_agent_config": ()})
    assert registry.missing_pieces(reads_none) == []
    assert "acme" not in registry.vendors()


def test_a_vendor_that_does_not_declare_its_installs_is_refused() -> None:
    """Where its CLI comes from, exactly pinned (checked against the image and CI in
    ``test_pins``); ``()`` declares a CLI on no public registry."""
    undeclared = type("Undeclared", (Acme,), {})
    del Acme.installs
    try:
        with pytest.raises(ConfigError, match=r"'acme' is incomplete: .*installs"):
            registry.VENDORS.register(registry.VendorInfo("acme", ("api_key",), 99, undeclared))
    finally:
        Acme.installs = (Install("npm", "@acme/acme-code", "1.0.0", "ACME_CODE_VERSION"),)
    unpinned = type(
        "Unpinned", (Acme,), {"installs": (Install("npm", "@acme/acme-code", "", "X"),)}
    )
    assert any("installs" in m for m in registry.missing_pieces(unpinned))
    on_no_registry = type("OnNoRegistry", (Acme,), {"installs": ()})
    assert registry.missing_pieces(on_no_registry) == []


def test_a_tier_table_without_every_tier_and_a_secret_no_mode_reads_are_refused() -> None:
    bad = type(
        "Bad",
        (Acme,),
        {"tiers": {"cheap": "acme-1", "standard": "acme-2"}, "secret_env": ("ACME_TOKEN",)},
    )
    with pytest.raises(ConfigError) as err:
        registry.VENDORS.register(registry.VendorInfo("acme", ("api_key",), 99, bad))
    assert "tiers must map exactly cheap, standard, high" in str(err.value)
    assert "secret_env ACME_TOKEN is read by no mode" in str(err.value)


def test_the_no_real_cli_guard_blocks_what_a_new_vendor_declares(monkeypatch) -> None:
    assert registry.missing_pieces(Acme) == []
    scratch(registry.VENDORS, monkeypatch).register(registry.VendorInfo("acme", (), 99, Acme))
    for name in ("acme-code", "/opt/bin/acme"):
        with pytest.raises(runner.RealCliBlockedError, match="acme"):
            runner.guard_real_cli([name, "-p", "x"])
    runner.guard_real_cli(["acme-sim", "-p", "x"])  # a scripted stand-in is not blocked


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_central_tables_are_the_vendors_own_declarations(vendor: str) -> None:
    plugin = registry.get(vendor).factory
    assert tiers.TIERS[vendor] == plugin.tiers
    assert tiers.MODEL_PREFIXES[vendor] == plugin.model_prefixes
    for mode, table in plugin.mode_tiers.items():
        assert tiers.MODE_TIERS[(vendor, mode)] == table
    for model, rate in plugin.rates.items():
        assert cost.RATES[model] is rate
    assert {plugin.default_binary, *plugin.also_spawns} <= runner.vendor_binaries()


def test_no_central_table_holds_a_vendor_no_vendor_declares() -> None:
    declared_rates = {m for a in registry.vendor_classes() for m in a.rates}
    assert set(tiers.TIERS) == set(tiers.MODEL_PREFIXES) == set(VENDORS)
    assert {fam for fam, _mode in tiers.MODE_TIERS} <= set(VENDORS)
    assert set(cost.RATES) == declared_rates
    assert runner.vendor_binaries() == registry.binaries()


SECRETS = [(fam, name) for fam, names in registry.secret_env().items() for name in names]


@pytest.mark.parametrize(("vendor", "name"), SECRETS)
def test_every_vendor_secret_is_in_the_readme_configuration_table(vendor, name) -> None:
    rows = readme_secret_rows()
    assert f"`{name}`" in rows, f"{vendor}'s {name} has no (secret) row in the README table"
