"""``stored_at`` in the UI names where a value is without this machine's absolute path."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.storage.io_manager import portable_location


def test_a_value_under_dagster_home_or_the_values_dir_is_shown_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VERANDA_VALUES_DIR", raising=False)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    where = tmp_path / "home" / "veranda_values" / "patch" / "ENG-1.json"
    assert portable_location(str(where)) == "$DAGSTER_HOME/veranda_values/patch/ENG-1.json"
    monkeypatch.setenv("VERANDA_VALUES_DIR", str(tmp_path / "home" / "veranda_values"))
    assert portable_location(str(where)) == "$VERANDA_VALUES_DIR/patch/ENG-1.json"
    elsewhere = tmp_path / "other" / "patch" / "ENG-1.json"
    assert portable_location(str(elsewhere)) == str(elsewhere)  # nothing to hide it behind
