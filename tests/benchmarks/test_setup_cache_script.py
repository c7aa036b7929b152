"""``benchmarks/setup_cache.py`` run small: one cold setup and one cached ticket of the billing
sample, through the real setup step in bubblewrap, from a loopback index of a wheel made here
(the script's own run downloads pytest and ruff from PyPI, which the main suite cannot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.scripts import load_script
from tests.environment.conftest import TOOL_MODULE
from veranda_dagster.sim.package_index import PackageIndex, make_wheel


def test_a_round_pays_the_setup_once_and_the_next_ticket_makes_no_registry_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = load_script("setup_cache")
    wheels = tmp_path / "wheels"
    make_wheel(
        wheels,
        "hello-tool",
        "1.0",
        {"hello_tool.py": TOOL_MODULE},
        console_scripts={"hello-tool": "hello_tool:main"},
    )
    monkeypatch.setattr(
        bench,
        "INSTALL",
        "set -e\n"
        'python3 -m venv --without-pip "$VERANDA_ENV/venv"\n'
        'python3 -m pip --python "$VERANDA_ENV/venv/bin/python" install hello-tool\n',
    )
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")
    with PackageIndex(wheels) as index:
        registries = {"pypi": {"url": index.base_url + "/simple", "kind": "pypi"}}
        monkeypatch.setenv("VERANDA_REGISTRIES", json.dumps(registries))
        result = bench._round(index, tickets=1)
    cold, cached = result["status"]
    assert (cold, cached) == ("ready", "cached"), result
    assert result["requests"][0] > 0 and result["requests"][1] == 0
    assert result["seconds"][1] < result["seconds"][0]
