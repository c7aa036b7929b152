"""Every demo mode checks what it needs before anything starts: one line on stderr, exit 2,
no folder made, no ticket filed (``veranda demo --frontend`` without Chromium used to run the
whole ticket and fail after three implementer attempts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.cli import main
from veranda_dagster.cli.preflight import frontend_missing
from veranda_dagster.domain.core.mcp_config import BROWSER_ENV, PLAYWRIGHT_MCP_BIN_ENV
from veranda_dagster.sim.sim_vendors import find_binary


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    return captured.err


def test_frontend_with_the_stand_in_is_refused_before_anything_starts(tmp_path, capsys) -> None:
    workdir = tmp_path / "demo"
    err = refused(["demo", "--frontend", "--agent", "sim", "--workdir", str(workdir)], capsys)
    assert "--frontend needs a CLI that drives the browser" in err and "--agent claude" in err
    assert not workdir.exists()


def test_frontend_without_chromium_is_refused_in_one_line(tmp_path, capsys, monkeypatch) -> None:
    if find_binary("claude") is None:
        pytest.skip("the pinned claude CLI is not installed (.ci/run installs it)")
    monkeypatch.setenv(BROWSER_ENV, str(tmp_path / "no-chromium"))
    workdir = tmp_path / "demo"
    err = refused(["demo", "--frontend", "--agent", "claude", "--workdir", str(workdir)], capsys)
    assert err.startswith("veranda demo: error: --frontend needs Chromium")
    assert not workdir.exists()


def test_each_frontend_requirement_is_named(tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    ok = {BROWSER_ENV: str(tool), PLAYWRIGHT_MCP_BIN_ENV: str(tool)}
    assert frontend_missing("claude", ok) is None
    assert "drives the browser" in str(frontend_missing("codex", ok))
    no_browser = {**ok, BROWSER_ENV: str(tmp_path / "none")}
    assert "needs Chromium" in str(frontend_missing("claude", no_browser))
    (tmp_path / "plain").write_text("not executable")
    no_server = {**ok, PLAYWRIGHT_MCP_BIN_ENV: str(tmp_path / "plain")}
    assert "Playwright MCP server" in str(frontend_missing("claude", no_server))
    assert "Playwright MCP server" in str(frontend_missing("claude", {BROWSER_ENV: str(tool)}))


def test_a_missing_agent_cli_is_refused_in_one_line(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("veranda_dagster.sim.sim_vendors.find_binary", lambda agent: None)
    err = refused(["demo", "--agent", "kimi", "--workdir", str(tmp_path / "d")], capsys)
    assert "agent 'kimi'" in err and "is not installed" in err
    assert not (tmp_path / "d").exists()
