"""Every vendor's MCP config starts the pinned, installed Playwright MCP server on Chromium.

For each vendor and mode the registry knows, the vendor's declared format is rendered from the
descriptor the context phase resolves on this machine, read back the way that CLI reads it
(JSON ``mcpServers``, opencode's ``mcp`` command list, TOML ``mcp_servers``), and the command it
names is started for real: it must be the installed binary (never ``npx -y``, which downloads
at run time), report the pinned version, speak MCP on stdio and offer the browser tools, with
``--executable-path`` naming the installed Chromium. Without the install the test skips, except
under ``CI``, where ``.ci/run`` installs it and a missing one fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.browser_mcp import McpStdioClient
from tests.vendors.conftest import ALL_KEYS, FakeLogin, ScriptedRunner
from veranda_dagster.domain.core.mcp_config import (
    FORMAT_IDS,
    PLAYWRIGHT_MCP_BINARY,
    PLAYWRIGHT_MCP_VERSION,
    McpServer,
    render_mcp_config,
    resolve_playwright_mcp,
)
from veranda_dagster.sim.http_fake import SHUTDOWN_POLL_S
from veranda_dagster.vendors import registry
from veranda_dagster.vendors.vendor_config import VendorConfig

REPO = Path(__file__).resolve().parents[2]
BROWSER_TOOLS = {"browser_navigate", "browser_snapshot", "browser_console_messages"}


def declared_formats() -> dict[str, str]:
    """``vendor/mode`` -> the MCP format its vendor declares."""
    out = {}
    for vendor in registry.vendors():
        for mode in registry.get(vendor).modes:
            cli = registry.get(vendor).factory(
                mode, VendorConfig(vendor=vendor), ScriptedRunner([]), FakeLogin(), ALL_KEYS
            )
            out[f"{vendor}/{mode}"] = cli.capabilities.mcp_format
    return out


def launch_of(format_id: str, content: str, name: str = "playwright") -> tuple[str, list[str]]:
    """(command, args) of server ``name`` as the CLI reading ``format_id`` would start it."""
    if format_id.endswith("_toml"):
        entry = tomllib.loads(content)["mcp_servers"][name]
        return entry["command"], list(entry["args"])
    data = json.loads(content)
    if format_id == "opencode_json":
        entry = data["mcp"][name]
        assert entry["type"] == "local" and entry["enabled"] is True
        return entry["command"][0], list(entry["command"][1:])
    entry = data["mcpServers"][name]
    return entry["command"], list(entry["args"])


def installed_server() -> McpServer:
    path = os.environ.get("PATH", "")
    path = os.pathsep.join([str(REPO / ".veranda/bin"), path])
    server = resolve_playwright_mcp({**os.environ, "PATH": path})
    if not Path(server.command).is_absolute() or shutil.which("chromium", path=path) is None:
        if os.environ.get("CI"):
            pytest.fail("CI: .ci/run installs @playwright/mcp and chromium")
        pytest.skip("@playwright/mcp or chromium not installed here; .ci/run installs them")
    return server


def test_every_format_is_declared_by_some_vendor_and_every_vendor_declares_one():
    assert set(declared_formats().values()) == set(FORMAT_IDS)
    assert {key.split("/")[0] for key in declared_formats()} == set(registry.vendors())


def test_the_installed_server_is_the_pinned_version():
    version = subprocess.run(
        [installed_server().command, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert version.stdout.strip() == f"Version {PLAYWRIGHT_MCP_VERSION}"


@pytest.mark.parametrize("format_id", FORMAT_IDS)
def test_each_vendors_rendered_config_starts_the_installed_server(format_id):
    """One start per format; every vendor/mode declaring it gets exactly this file."""
    server = installed_server()
    vendors = [b for b, f in declared_formats().items() if f == format_id]
    assert vendors, format_id
    _, content = render_mcp_config([server], format_id)
    command, args = launch_of(format_id, content)
    assert "npx" not in content and '"-y"' not in content
    assert command == server.command and Path(command).name == PLAYWRIGHT_MCP_BINARY
    browser = args[args.index("--executable-path") + 1]
    assert Path(browser).is_absolute() and os.access(browser, os.X_OK)
    assert Path(browser).resolve() == Path(shutil.which("chromium") or browser).resolve()
    assert {"--headless", "--isolated"} <= set(args)
    with McpStdioClient([command, *args]) as client:
        assert client.server_info()["name"] == "Playwright", vendors
        assert set(client.tool_names()) >= BROWSER_TOOLS, vendors


def test_the_rendered_server_drives_chromium_on_a_loopback_page(tmp_path):
    """The one browser launch of this file: navigate, then read the console, as a seat does."""
    import http.server
    import threading

    server = installed_server()
    (tmp_path / "index.html").write_text(
        "<title>probe</title><h1>Cart</h1><script>console.error('cart: 3 seats')</script>"
    )
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(  # noqa: E731
        *a, directory=str(tmp_path)
    )
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, args=(SHUTDOWN_POLL_S,), daemon=True).start()
    try:
        _, content = render_mcp_config([server], "mcp_json")
        command, args = launch_of("mcp_json", content)
        with McpStdioClient([command, *args], cwd=tmp_path) as client:
            url = f"http://127.0.0.1:{httpd.server_port}/index.html"
            page = client.call("browser_navigate", {"url": url})
            assert f"Page URL: {url}" in page
            snapshot = client.call("browser_snapshot", {})
            assert 'heading "Cart"' in snapshot
            console = client.call("browser_console_messages", {"level": "error"})
            assert "[ERROR] cart: 3 seats" in console
    finally:
        httpd.shutdown()
        httpd.server_close()
