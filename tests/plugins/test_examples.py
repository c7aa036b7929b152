"""The worked example plugins in ``docs/examples/`` (one per kind) are complete: each registers
in its kind's registry and what is derived from the registry follows it; each with one piece
dropped is refused loudly at registration; and discovery refuses a folder that declares nothing
or declares another plugin than itself."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.plugins import scratch
from veranda_dagster import definitions
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.forges.registry import FORGES, ForgeProvider, forge_provider
from veranda_dagster.registry import Registry
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import registered_type
from veranda_dagster.sources import registry as sources
from veranda_dagster.vendors import registry as vendors
from veranda_dagster.vendors import runner

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def _package(path: Path, name: str) -> ModuleType:
    """``path`` (an example plugin folder) imported as the package ``name``."""
    spec = importlib.util.spec_from_file_location(
        name, path / "__init__.py", submodule_search_locations=[str(path)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return importlib.import_module(f"{name}.plugin")


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


SOURCE = _package(EXAMPLES / "sources" / "acmedesk", "example_sources_acmedesk").PLUGIN
FORGE = _package(EXAMPLES / "forges" / "acmeforge", "example_forges_acmeforge").PLUGIN
VENDOR = _module(EXAMPLES / "vendor" / "acme.py", "example_vendor_acme").PLUGIN


def test_the_example_source_registers_and_everything_derived_follows(monkeypatch):
    scratch(sources.SOURCES, monkeypatch).register(SOURCE)
    assert sources.address("acmedesk-DESK-42").external_id == "DESK-42"
    assert sources.get("acmedesk").sensor.name == "acmedesk_tickets"
    assert sources.secret_env()["acmedesk"] == ("ACMEDESK_TOKEN",)
    sample = SOURCE.token_shapes[0].sample
    assert sample not in scrub(f"token {sample} leaked", environ={})


def test_the_example_forge_registers_and_everything_derived_follows(monkeypatch):
    scratch(FORGES, monkeypatch).register(FORGE)
    assert forge_provider(" AcmeForge ") is FORGE
    resource = ForgeResource.from_env({"VERANDA_FORGE": "acmeforge", "ACMEFORGE_TOKEN": "x"})
    assert resource.token_env == "ACMEFORGE_TOKEN" and resource.search_per_minute == 30
    assert resource.parse_pr_url("https://code.acme.test/team/app/changes/4") == ("team/app", 4)
    sample = FORGE.token_shapes[0].sample
    assert sample not in scrub(f"token {sample} leaked", environ={})


def test_the_example_vendor_registers_and_everything_derived_follows(monkeypatch):
    scratch(vendors.VENDORS, monkeypatch).register(VENDOR)
    assert vendors.vendors()[-1] == "acme" and "acme-code" in vendors.binaries()
    monkeypatch.setenv(runner.NO_REAL_CLI_ENV, "1")
    with pytest.raises(runner.RealCliBlockedError, match="acme-code"):
        runner.guard_real_cli(["/opt/acme/bin/acme-code", "-p", "x"])
    sample = VENDOR.factory.token_patterns[0].sample
    assert sample not in scrub(f"token {sample} leaked", environ={})


@pytest.mark.parametrize("piece", ["title", "setup_hint", "secret_env", "token_shapes"])
def test_the_example_source_missing_a_piece_is_refused_at_registration(monkeypatch, piece):
    table = scratch(sources.SOURCES, monkeypatch)
    empty = "" if isinstance(getattr(SOURCE, piece), str) else ()
    with pytest.raises(ConfigError, match=rf"ticket source 'acmedesk' is incomplete: .*{piece}"):
        table.register(dataclasses.replace(SOURCE, **{piece: empty}))
    assert "acmedesk" not in table


@pytest.mark.parametrize(
    ("piece", "value"),
    [("git_username", ""), ("env_prefix", "acme"), ("search_per_minute", 0), ("token_shapes", ())],
)
def test_the_example_forge_missing_a_piece_is_refused_at_registration(monkeypatch, piece, value):
    table = scratch(FORGES, monkeypatch)
    with pytest.raises(ConfigError, match=rf"forge 'acmeforge' is incomplete: .*{piece}"):
        table.register(dataclasses.replace(FORGE, **{piece: value}))
    assert "acmeforge" not in table


@pytest.mark.parametrize("piece", ["tiers", "rates", "secret_env", "token_patterns"])
def test_the_example_vendor_missing_a_piece_is_refused_at_registration(monkeypatch, piece):
    table = scratch(vendors.VENDORS, monkeypatch)
    lacking = type("Lacking", (VENDOR.factory,), {piece: {} if piece in ("tiers", "rates") else ()})
    with pytest.raises(ConfigError, match=rf"vendor 'acme' is incomplete: .*{piece}"):
        table.register(dataclasses.replace(VENDOR, factory=lacking))
    assert "acme" not in table


def _forges_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **folders: str) -> Registry:
    """A forge registry over a scratch package whose folders each hold a copy of the example,
    its ``plugin.py`` replaced by the text given (``""``: kept)."""
    root = tmp_path / "scratch_forges"
    root.mkdir()
    (root / "__init__.py").write_text("")
    for name, plugin in folders.items():
        shutil.copytree(EXAMPLES / "forges" / "acmeforge", root / name)
        if plugin:
            (root / name / "plugin.py").write_text(plugin)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("scratch_forges")]:
        monkeypatch.delitem(sys.modules, name)
    return Registry(
        "forge",
        "scratch_forges",
        name_of=lambda row: row.name,
        missing_pieces=lambda row: FORGES.missing_pieces(row),
    )


def test_discovery_finds_a_copied_example_folder(tmp_path, monkeypatch):
    found = _forges_in(tmp_path, monkeypatch, acmeforge="")
    assert list(found) == ["acmeforge"] and isinstance(found["acmeforge"], ForgeProvider)


def test_discovery_refuses_a_folder_that_declares_nothing(tmp_path, monkeypatch):
    found = _forges_in(tmp_path, monkeypatch, acmeforge="", empty='"""No PLUGIN here."""\n')
    with pytest.raises(ConfigError, match=r"scratch_forges/empty/plugin\.py declares no PLUGIN"):
        found.discover()


def test_discovery_refuses_a_folder_declaring_another_plugin(tmp_path, monkeypatch):
    found = _forges_in(tmp_path, monkeypatch, other="")
    with pytest.raises(ConfigError, match=r"declares the forge 'acmeforge', not 'other'"):
        list(found)


def test_a_new_source_joins_the_definitions_by_what_its_plugin_contributes(monkeypatch):
    """``definitions.py`` merges each source's own Definitions (its resource, its sensor once
    enabled): a new source folder needs no line there."""
    scratch(sources.SOURCES, monkeypatch).register(SOURCE)
    registered_type.cache_clear()  # the tickets resource has one field per registered source
    monkeypatch.setenv("VERANDA_SOURCES", "linear,slack,acmedesk")
    try:
        defs = definitions.build_definitions()
    finally:
        registered_type.cache_clear()
    resources = defs.resources
    assert isinstance(resources["acmedesk"], SOURCE.resource)
    assert resources["tickets"].acmedesk is resources["acmedesk"]
    assert "acmedesk" in resources["tickets"].enabled
    assert "acmedesk_tickets" in {s.name for s in defs.sensors}
    monkeypatch.setenv("VERANDA_SOURCES", "linear,slack")
    try:
        quiet = definitions.build_definitions()
    finally:
        registered_type.cache_clear()
    assert "acmedesk_tickets" not in {s.name for s in quiet.sensors}  # opt-in: not listed
    assert "acmedesk" in quiet.resources  # still bound, refusing its keys by naming the setting
