"""One MCP descriptor rendered in every CLI's own config format, fresh: never merged with the
repository's own (which is masked for the turn, ``vendors.isolation``)."""

import json
import tomllib
from pathlib import Path

import pytest

from tests.vendors.conftest import FakeLogin
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.domain.core.mcp_config import (
    BROWSER_ENV,
    FORMAT_IDS,
    PLAYWRIGHT_INSTRUCTIONS,
    PLAYWRIGHT_MCP,
    PLAYWRIGHT_MCP_BIN_ENV,
    PLAYWRIGHT_MCP_BINARY,
    PLAYWRIGHT_MCP_VERSION,
    McpServer,
    render_mcp_config,
    resolve_playwright_mcp,
)
from veranda_dagster.vendors.plugins.codex import CodexVendor
from veranda_dagster.vendors.plugins.cursor import CursorVendor
from veranda_dagster.vendors.plugins.kimi import KimiVendor
from veranda_dagster.vendors.port import Turn
from veranda_dagster.vendors.runner import SubprocessRunner
from veranda_dagster.vendors.vendor_config import VendorConfig

SERVER = McpServer(name="obs", command="veranda", args=["mcp-observability"], env={"A": "1"})


def test_the_playwright_descriptor_runs_the_installed_server_headless_on_chromium():
    assert PLAYWRIGHT_MCP.command == "playwright-mcp"
    args = PLAYWRIGHT_MCP.args
    assert "npx" not in args and "-y" not in args and "@playwright/mcp" not in " ".join(args)
    assert args[args.index("--executable-path") + 1] == "/usr/bin/chromium"
    assert args[args.index("--browser") + 1] == "chromium"
    assert {"--headless", "--isolated", "--no-sandbox"} <= set(args)
    assert PLAYWRIGHT_MCP_VERSION.count(".") == 2 and "latest" not in PLAYWRIGHT_MCP_VERSION


def test_the_pin_is_the_one_ci_and_the_image_install():
    root = Path(__file__).resolve().parents[3]
    assert f"PLAYWRIGHT_MCP_PIN={PLAYWRIGHT_MCP_VERSION}\n" in (root / ".ci/run").read_text()
    dockerfile = (root / "Dockerfile").read_text()
    # the CLI stage installs the server only with WITH_BROWSER=1; the browser stage checks it
    clis = dockerfile.split("FROM base AS clis\n", 1)[1].split("\nFROM ", 1)[0]
    browser = dockerfile.split("FROM system AS browser-1\n", 1)[1].split("\nFROM ", 1)[0]
    assert f"ARG PLAYWRIGHT_MCP_VERSION={PLAYWRIGHT_MCP_VERSION}\n" in clis
    assert f"ARG PLAYWRIGHT_MCP_VERSION={PLAYWRIGHT_MCP_VERSION}\n" in browser
    assert (
        'if [ "${WITH_BROWSER}" = 1 ]; then npm install -g '
        '"@playwright/mcp@${PLAYWRIGHT_MCP_VERSION}"' in clis
    )
    assert 'playwright-mcp --version | grep -qx "Version ${PLAYWRIGHT_MCP_VERSION}"' in browser
    assert "chromium" in browser.split("apt-get install", 1)[1].split("&&", 1)[0]


def test_resolution_finds_the_installed_server_and_browser_on_path(tmp_path):
    for name in (PLAYWRIGHT_MCP_BINARY, "chromium"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    found = resolve_playwright_mcp({"PATH": str(tmp_path)})
    assert found.command == str(tmp_path / PLAYWRIGHT_MCP_BINARY)
    assert found.args[found.args.index("--executable-path") + 1] == str(tmp_path / "chromium")
    named = resolve_playwright_mcp(
        {"PATH": str(tmp_path), PLAYWRIGHT_MCP_BIN_ENV: "/opt/pw/mcp", BROWSER_ENV: "/opt/chr"}
    )
    assert named.command == "/opt/pw/mcp"
    assert named.args[named.args.index("--executable-path") + 1] == "/opt/chr"
    assert resolve_playwright_mcp({"PATH": ""}) == PLAYWRIGHT_MCP


def test_the_instruction_names_the_stubbing_boundary():
    text = " ".join(PLAYWRIGHT_INSTRUCTIONS.split())
    assert "request and websocket stubbing" in text and "NOT available" in text
    assert "ephemeral Playwright script" in text


@pytest.mark.parametrize(
    ("format_id", "path", "key"),
    [
        ("mcp_json", ".mcp.json", "mcpServers"),
        ("gemini_settings", ".gemini/settings.json", "mcpServers"),
        ("cursor_json", ".cursor/mcp.json", "mcpServers"),
        ("kimi_json", ".kimi-code/mcp.json", "mcpServers"),
    ],
)
def test_json_formats(format_id, path, key):
    rel, content = render_mcp_config([PLAYWRIGHT_MCP, SERVER], format_id)
    assert rel == path
    servers = json.loads(content)[key]
    assert servers["playwright"] == {"command": "playwright-mcp", "args": PLAYWRIGHT_MCP.args}
    assert servers["obs"] == {
        "command": "veranda",
        "args": ["mcp-observability"],
        "env": {"A": "1"},
    }


def test_opencode_format():
    rel, content = render_mcp_config([SERVER], "opencode_json")
    assert rel == "opencode.json"
    assert json.loads(content)["mcp"]["obs"] == {
        "type": "local",
        "command": ["veranda", "mcp-observability"],
        "enabled": True,
        "environment": {"A": "1"},
    }


@pytest.mark.parametrize(
    ("format_id", "path"),
    [("codex_toml", ".codex/config.toml"), ("grok_toml", ".grok/config.toml")],
)
def test_toml_formats(format_id, path):
    rel, content = render_mcp_config([PLAYWRIGHT_MCP, SERVER], format_id)
    assert rel == path
    data = tomllib.loads(content)["mcp_servers"]
    assert data["playwright"] == {"command": "playwright-mcp", "args": PLAYWRIGHT_MCP.args}
    assert data["obs"] == {"command": "veranda", "args": ["mcp-observability"], "env": {"A": "1"}}


def test_every_format_renders_and_unknown_ones_are_a_config_error():
    assert len({render_mcp_config([SERVER], f)[0] for f in FORMAT_IDS}) == len(FORMAT_IDS) > 1
    with pytest.raises(ConfigError, match="unknown MCP config format 'vscode'"):
        render_mcp_config([SERVER], "vscode")
    with pytest.raises(InputError, match="must match"):
        render_mcp_config([McpServer(name="bad name", command="x")], "mcp_json")


def test_the_config_shown_to_a_cli_holds_only_the_products_servers(tmp_path):
    """Nothing is merged with the repository's own config any more: its ``.mcp.json`` and
    ``.codex/config.toml`` (other servers, other settings) are masked for the turn and the
    product's rendering, shown in their place, holds exactly the product's servers."""
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"theirs": {"command": "x"}}, "other": True})
    )
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        '# keep me\nmodel = "gpt"\n\n[mcp_servers.theirs]\ncommand = "y"\n'
    )
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    turn = Turn(prompt="p", workdir=str(tmp_path), mcp_servers=[PLAYWRIGHT_MCP])
    codex = CodexVendor("api_key", VendorConfig(vendor="codex"), SubprocessRunner(), FakeLogin())
    ((rel, text),) = codex.product_config(turn).items()
    assert rel == ".codex/config.toml"
    toml = tomllib.loads(text)
    assert toml == {
        "mcp_servers": {"playwright": {"command": "playwright-mcp", "args": PLAYWRIGHT_MCP.args}}
    }
    cursor = CursorVendor("api_key", VendorConfig(vendor="cursor"), SubprocessRunner(), FakeLogin())
    ((rel, text),) = cursor.product_config(turn).items()
    assert rel == ".cursor/mcp.json" and list(json.loads(text)["mcpServers"]) == ["playwright"]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_an_unparseable_repository_config_does_not_stop_the_products(tmp_path):
    """Once a merge refused to overwrite an unparseable ``.mcp.json``; the repository's file is
    now neither read nor written, so it cannot keep the product's servers from the CLI."""
    (tmp_path / ".mcp.json").write_text("{oops")
    turn = Turn(prompt="p", workdir=str(tmp_path), mcp_servers=[PLAYWRIGHT_MCP])
    kimi = KimiVendor("api_key", VendorConfig(vendor="kimi"), SubprocessRunner(), FakeLogin())
    ((rel, text),) = kimi.product_config(turn).items()
    assert rel == ".kimi-code/mcp.json" and "playwright" in json.loads(text)["mcpServers"]
    assert (tmp_path / ".mcp.json").read_text() == "{oops"
