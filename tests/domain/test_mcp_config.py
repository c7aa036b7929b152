"""One MCP descriptor rendered in every CLI's own config format, and merged into existing files."""

import json
import tomllib

import pytest

from veranda_dagster.domain.errors import ConfigError, InputError
from veranda_dagster.domain.mcp_config import (
    FORMAT_IDS,
    PLAYWRIGHT_INSTRUCTIONS,
    PLAYWRIGHT_MCP,
    PLAYWRIGHT_MCP_VERSION,
    McpServer,
    render_mcp_config,
    write_mcp_configs,
)

SERVER = McpServer(name="obs", command="veranda", args=["mcp-observability"], env={"A": "1"})


def test_the_playwright_descriptor_is_pinned_and_headless():
    assert PLAYWRIGHT_MCP.command == "npx"
    assert f"@playwright/mcp@{PLAYWRIGHT_MCP_VERSION}" in PLAYWRIGHT_MCP.args
    assert "--headless" in PLAYWRIGHT_MCP.args
    assert "latest" not in " ".join(PLAYWRIGHT_MCP.args)


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
    assert servers["playwright"] == {"command": "npx", "args": PLAYWRIGHT_MCP.args}
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
    assert data["playwright"] == {"command": "npx", "args": PLAYWRIGHT_MCP.args}
    assert data["obs"] == {"command": "veranda", "args": ["mcp-observability"], "env": {"A": "1"}}


def test_every_format_renders_and_unknown_ones_are_a_config_error():
    assert len({render_mcp_config([SERVER], f)[0] for f in FORMAT_IDS}) == len(FORMAT_IDS) == 7
    with pytest.raises(ConfigError, match="unknown MCP config format 'vscode'"):
        render_mcp_config([SERVER], "vscode")
    with pytest.raises(InputError, match="must match"):
        render_mcp_config([McpServer(name="bad name", command="x")], "mcp_json")


def test_writing_merges_with_existing_json_and_toml(tmp_path):
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {"theirs": {"command": "x"}, "playwright": {"command": "old"}},
                "other": True,
            }
        )
    )
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        '# keep me\nmodel = "gpt"\n\n[mcp_servers.playwright]\ncommand = "old"\n\n'
        '[mcp_servers.playwright.env]\nX = "1"\n\n[mcp_servers.theirs]\ncommand = "y"\n'
    )
    written = write_mcp_configs(
        tmp_path, [PLAYWRIGHT_MCP], ["mcp_json", "codex_toml", "cursor_json"]
    )
    assert written == [".mcp.json", ".codex/config.toml", ".cursor/mcp.json"]
    data = json.loads((tmp_path / ".mcp.json").read_text())
    assert data["other"] is True
    assert data["mcpServers"]["theirs"] == {"command": "x"}
    assert data["mcpServers"]["playwright"]["command"] == "npx"
    text = (tmp_path / ".codex" / "config.toml").read_text()
    assert text.startswith("# keep me\n")
    toml = tomllib.loads(text)
    assert toml["model"] == "gpt"
    assert toml["mcp_servers"]["theirs"] == {"command": "y"}
    assert toml["mcp_servers"]["playwright"] == {"command": "npx", "args": PLAYWRIGHT_MCP.args}
    assert json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]["playwright"]
    again = write_mcp_configs(tmp_path, [PLAYWRIGHT_MCP], ["codex_toml"])
    assert again == [".codex/config.toml"]
    assert (tmp_path / ".codex" / "config.toml").read_text() == text


def test_an_unparseable_existing_json_config_is_not_overwritten(tmp_path):
    (tmp_path / ".mcp.json").write_text("{oops")
    with pytest.raises(InputError, match="not valid JSON"):
        write_mcp_configs(tmp_path, [PLAYWRIGHT_MCP], ["mcp_json"])
    assert (tmp_path / ".mcp.json").read_text() == "{oops"
