"""One vendor-agnostic MCP server descriptor, rendered in each CLI's own config format.

Adding a tool server must not fork per provider: the descriptor says what to run, and one small
renderer per format says where that CLI looks and how it spells it. Nothing is written into
the clone: a turn is shown the rendering for its CLI in place of the repository's own file,
which is masked (``vendors.isolation``), so it is never merged with what the repository ships.

Format ids (an vendor declares one as ``Capabilities.mcp_format``):

====================  ===========================  ==========================================
id                    file (repo-relative)         shape
====================  ===========================  ==========================================
``mcp_json``          ``.mcp.json``                Claude Code: ``{"mcpServers": {name: …}}``
``codex_toml``        ``.codex/config.toml``       ``[mcp_servers.<name>]`` command/args/env
``gemini_settings``   ``.gemini/settings.json``    ``{"mcpServers": {name: …}}``
``cursor_json``       ``.cursor/mcp.json``         ``{"mcpServers": {name: …}}``
``kimi_json``         ``.kimi-code/mcp.json``      ``{"mcpServers": {name: …}}``
``grok_toml``         ``.grok/config.toml``        ``[mcp_servers.<name>]``
``opencode_json``     ``opencode.json``            ``{"mcp": {name: {"type": "local", …}}}``
====================  ===========================  ==========================================
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from veranda_dagster.domain.core.errors import ConfigError, InputError

PLAYWRIGHT_MCP_VERSION = "0.0.83"
"""Pinned like the vendor CLIs (``.ci/run``, the Dockerfile): a tool upgrade is a deploy, a
rollback is a tag. Installed ahead of time, never fetched by the CLI at run time (``npx -y``
needs the network on a worker, and Playwright's own browser download cannot work offline)."""
PLAYWRIGHT_MCP_BINARY = "playwright-mcp"
"""The package's executable: ``.veranda/bin/playwright-mcp`` here, ``/usr/local/bin`` in the
image."""
PLAYWRIGHT_MCP_BIN_ENV = "VERANDA_PLAYWRIGHT_MCP"
"""Where the installed server is, when it is not ``playwright-mcp`` on ``PATH``."""
BROWSER_ENV = "VERANDA_BROWSER"
"""The browser the server drives: Debian's ``chromium`` unless this names another."""
DEFAULT_BROWSER = "/usr/bin/chromium"
BROWSER_OUTPUT_DIR = ".playwright-mcp"
"""Where the server drops snapshots and console logs, relative to the clone: kept out of git."""


class McpServer(BaseModel):
    """A stdio MCP server: what to run. Nothing vendor-specific lives here."""

    model_config = ConfigDict(frozen=True)

    name: str
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)


def playwright_mcp(
    command: str = PLAYWRIGHT_MCP_BINARY, browser: str = DEFAULT_BROWSER
) -> McpServer:
    """The browser server: the installed ``command`` driving the installed ``browser``, headless,
    with a throwaway in-memory profile and no Chromium sandbox (the agent's own sandbox is the
    boundary; Chromium's needs user namespaces a worker pod does not grant)."""
    return McpServer(
        name="playwright",
        command=command,
        args=[
            "--headless",
            "--browser",
            "chromium",
            "--executable-path",
            browser,
            "--isolated",
            "--no-sandbox",
            "--output-dir",
            BROWSER_OUTPUT_DIR,
        ],
    )


def resolve_playwright_mcp(environ: Mapping[str, str] | None = None) -> McpServer:
    """``playwright_mcp`` with absolute paths where they can be found: ``VERANDA_PLAYWRIGHT_MCP``
    or ``playwright-mcp`` on ``PATH``; ``VERANDA_BROWSER`` or ``chromium`` on ``PATH``. An absolute
    path keeps working when the CLI starts the server with a narrower ``PATH`` than ours."""
    env = os.environ if environ is None else environ
    path = env.get("PATH")
    command = env.get(PLAYWRIGHT_MCP_BIN_ENV) or shutil.which(PLAYWRIGHT_MCP_BINARY, path=path)
    browser = env.get(BROWSER_ENV) or shutil.which("chromium", path=path)
    return playwright_mcp(command or PLAYWRIGHT_MCP_BINARY, browser or DEFAULT_BROWSER)


PLAYWRIGHT_MCP = playwright_mcp()
"""The descriptor as the image has it (both executables on ``PATH``'s standard places)."""

PLAYWRIGHT_INSTRUCTIONS = """\
A browser is available through the `playwright` MCP server: navigate, click, type, take an
accessibility snapshot, take a screenshot and read the console.
It drives the page but cannot intercept its traffic: request and websocket stubbing (mocking
an API response, failing a request, faking a socket message) is NOT available through it. When
a check needs stubbed traffic, write an ephemeral Playwright script (`page.route(...)`,
`page.route_web_socket(...)`) outside the repository's tests, run it with the Playwright the
repository's tests already use (nothing is downloaded), launching the installed browser, and
delete it. Never claim a request was stubbed through the MCP tools: a test that believes it
stubbed traffic it did not passes for the wrong reason.
"""

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def _json_entry(server: McpServer) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": server.command, "args": list(server.args)}
    if server.env:
        entry["env"] = dict(server.env)
    return entry


def _opencode_entry(server: McpServer) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": "local",
        "command": [server.command, *server.args],
        "enabled": True,
    }
    if server.env:
        entry["environment"] = dict(server.env)
    return entry


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _toml_tables(servers: list[McpServer]) -> str:
    out: list[str] = []
    for server in servers:
        out.append(f"[mcp_servers.{server.name}]")
        out.append(f"command = {_toml_string(server.command)}")
        out.append("args = [" + ", ".join(_toml_string(a) for a in server.args) + "]")
        if server.env:
            out.append("")
            out.append(f"[mcp_servers.{server.name}.env]")
            out += [f"{_toml_string(k)} = {_toml_string(v)}" for k, v in server.env.items()]
        out.append("")
    return "\n".join(out)


_JSON_FORMATS: dict[str, tuple[str, str, Callable[[McpServer], dict[str, Any]]]] = {
    "mcp_json": (".mcp.json", "mcpServers", _json_entry),
    "gemini_settings": (".gemini/settings.json", "mcpServers", _json_entry),
    "cursor_json": (".cursor/mcp.json", "mcpServers", _json_entry),
    "kimi_json": (".kimi-code/mcp.json", "mcpServers", _json_entry),
    "opencode_json": ("opencode.json", "mcp", _opencode_entry),
}
_TOML_FORMATS: dict[str, str] = {
    "codex_toml": ".codex/config.toml",
    "grok_toml": ".grok/config.toml",
}
FORMAT_IDS = tuple(_JSON_FORMATS) + tuple(_TOML_FORMATS)


def _check(servers: list[McpServer], format_id: str) -> None:
    if format_id not in FORMAT_IDS:
        raise ConfigError(
            f"unknown MCP config format {format_id!r}; known: {', '.join(FORMAT_IDS)}"
        )
    for server in servers:
        if not _NAME.match(server.name):
            raise InputError(f"MCP server name {server.name!r} must match [A-Za-z0-9_-]+")


def render_mcp_config(servers: list[McpServer], format_id: str) -> tuple[str, str]:
    """``(relative_path, content)`` of a fresh config holding exactly ``servers``."""
    _check(servers, format_id)
    if format_id in _TOML_FORMATS:
        return _TOML_FORMATS[format_id], _toml_tables(servers)
    path, key, entry = _JSON_FORMATS[format_id]
    data = {key: {s.name: entry(s) for s in servers}}
    return path, json.dumps(data, indent=2, ensure_ascii=False) + "\n"
