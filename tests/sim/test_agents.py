"""The real-binary switch: which CLI the sim runs, where it finds it, what the vendors say."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.cli import main
from veranda_dagster.sim import sim_vendors
from veranda_dagster.sim.sim_vendors import (
    AGENTS,
    REAL_AGENTS,
    AgentNotInstalledError,
    agent_vendors_config,
    default_agent,
)
from veranda_dagster.sim.world import SimWorld
from veranda_dagster.vendors.config import VendorsConfig


@pytest.fixture()
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty .veranda/ as the only place CLIs are found (nothing on PATH either)."""
    folder = tmp_path / ".veranda" / "bin"
    folder.mkdir(parents=True)
    monkeypatch.setattr(sim_vendors, "tool_dirs", lambda: [folder])
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for agent in REAL_AGENTS:
        monkeypatch.delenv(sim_vendors.BINARY_ENV.format(agent.upper()), raising=False)
    return folder


def install(folder: Path, name: str) -> Path:
    binary = folder / name
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    return binary


def test_the_default_is_the_first_real_cli_installed_else_the_stand_in(tools: Path) -> None:
    assert default_agent() == "sim"
    install(tools, "opencode")
    assert default_agent() == "glm"
    install(tools, "codex")
    assert default_agent() == "codex"  # the table's order: claude, codex, gemini, ...
    assert AGENTS[-1] == "sim" and list(AGENTS[:-1]) == list(REAL_AGENTS)


def test_a_missing_cli_is_a_clear_error_and_the_demo_exits_2(tools: Path, tmp_path, capsys):
    with pytest.raises(AgentNotInstalledError, match=r"@google/gemini-cli@0\.61\.0.*\.ci/run"):
        SimWorld(root=tmp_path / "w", agent="gemini")
    # refused by the demo's preflight, in one line, before it makes its folder
    assert main(["demo", "--agent", "gemini", "--json", "--workdir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "VERANDA_GEMINI_BIN" in err and err.count("\n") == 1
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("agent", sorted(REAL_AGENTS))
def test_each_real_cli_gets_its_binary_its_own_home_and_the_server(
    agent: str, tools: Path, tmp_path: Path
) -> None:
    spec = REAL_AGENTS[agent]
    binary = install(tools, spec.binary)
    if spec.node:
        install(tools, "node")  # the npm node build beside it
    doc = agent_vendors_config(agent, "http://127.0.0.1:9", tmp_path / "w", with_glm=False)
    (vendor,) = VendorsConfig.model_validate(doc).vendors
    assert (
        vendor.vendor == spec.vendor and vendor.base_url == "http://127.0.0.1:9" + spec.url_suffix
    )
    assert Path(str(vendor.home)).is_dir() and Path(str(vendor.home)).name == spec.vendor
    assert set(vendor.env.values()) <= set(sim_vendors.SIM_KEYS)
    if spec.node:  # kimi needs node >= 22.19: a wrapper runs it on the node beside it
        launcher = Path(str(vendor.binary)).read_text()
        assert str(tools / "node") in launcher and str(binary) in launcher
    else:
        assert vendor.binary == str(binary)


def test_claude_keeps_both_modes_and_glm_through_the_same_binary(tools, tmp_path) -> None:
    binary = install(tools, "claude")
    doc = agent_vendors_config("claude", "http://127.0.0.1:9", tmp_path)
    rows = [(f["vendor"], f["modes"], f["binary"]) for f in doc["vendors"]]
    assert rows == [
        ("claude", ["api_key", "login"], str(binary)),
        ("glm", ["api_key"], str(binary)),
    ]
    assert doc["vendors"][0]["home"] != doc["vendors"][1]["home"]


def test_an_override_variable_names_the_binary(tools, tmp_path, monkeypatch) -> None:
    elsewhere = install(tmp_path, "my-grok")
    monkeypatch.setenv("VERANDA_GROK_BIN", str(elsewhere))
    assert sim_vendors.find_binary("grok") == elsewhere
    monkeypatch.setenv("VERANDA_GROK_BIN", str(tmp_path / "absent"))
    assert sim_vendors.find_binary("grok") is None


def test_every_real_agent_is_a_pin_ci_installs() -> None:
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    for agent, spec in REAL_AGENTS.items():
        pin = spec.package.removeprefix("pypi ").replace("grok-cli-bin==", "GROK_PIN=")
        assert pin in ci, agent
        assert spec.node is None or spec.node in ci
