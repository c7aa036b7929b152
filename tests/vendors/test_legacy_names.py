"""The names the vendor concept had before issue 31's rename are public contracts: deployments
set ``VERANDA_BACKENDS_CONFIG``/``VERANDA_BACKENDS_FILE`` and write ``families:``/``family:``
in their vendors file. They keep working; the new names win when both are given, and a file
naming both spellings of one key is refused rather than silently picking one.

This file is left alone by the rename script (it names the former names on purpose)."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.sandbox.policy import default_forbidden
from veranda_dagster.settings import setting
from veranda_dagster.vendors.config import VendorsConfig


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_file_in_the_former_keys_loads_as_the_new_ones(tmp_path: Path) -> None:
    old = write(tmp_path, "old.yaml", "families:\n  - family: gemini\n    modes: [api_key]\n")
    new = write(tmp_path, "new.yaml", "vendors:\n  - vendor: gemini\n    modes: [api_key]\n")
    assert VendorsConfig.load(old) == VendorsConfig.load(new)
    assert [v.vendor for v in VendorsConfig.load(old).vendors] == ["gemini"]


@pytest.mark.parametrize(
    "text",
    [
        "vendors: [{vendor: gemini}]\nfamilies: [{family: claude}]\n",
        "vendors: [{vendor: gemini, family: claude}]\n",
    ],
)
def test_both_spellings_of_one_key_are_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="former name"):
        VendorsConfig.load(write(tmp_path, "both.yaml", text))


def test_the_former_config_variable_is_read_and_the_new_one_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = write(tmp_path, "old.yaml", "families: [{family: gemini}]\n")
    new = write(tmp_path, "new.yaml", "vendors: [{vendor: codex}]\n")
    monkeypatch.delenv("VERANDA_VENDORS_CONFIG", raising=False)
    monkeypatch.setenv("VERANDA_BACKENDS_CONFIG", str(old))
    assert [v.vendor for v in VendorsConfig.load().vendors] == ["gemini"]
    monkeypatch.setenv("VERANDA_VENDORS_CONFIG", str(new))
    assert [v.vendor for v in VendorsConfig.load().vendors] == ["codex"]


def test_the_former_file_variable_is_read_and_the_new_one_wins() -> None:
    assert setting("VERANDA_VENDORS_FILE", environ={"VERANDA_BACKENDS_FILE": "/old"}) == "/old"
    both = {"VERANDA_BACKENDS_FILE": "/old", "VERANDA_VENDORS_FILE": "/new"}
    assert setting("VERANDA_VENDORS_FILE", environ=both) == "/new"
    assert setting("VERANDA_VENDORS_FILE", "dflt", environ={}) == "dflt"


def test_a_vendors_file_under_the_former_name_is_still_hidden_from_the_sandbox() -> None:
    forbidden = default_forbidden({"VERANDA_BACKENDS_FILE": "/etc/veranda/vendors.yaml"})
    assert Path("/etc/veranda/vendors.yaml") in forbidden
