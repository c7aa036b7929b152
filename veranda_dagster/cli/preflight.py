"""What a demo mode needs, checked before anything starts: one line and exit 2 on a miss.

``veranda demo --frontend`` on a machine without Chromium used to file the ticket, run every
phase and fail after three implementer attempts deep in the sample's conftest. Each mode's
requirements are known up front (a sandbox, the agent's CLI, a browser and the Playwright MCP
server, a CLI that can drive it), so they are checked first, each with the one thing to do.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.mcp_config import BROWSER_ENV, PLAYWRIGHT_MCP_BIN_ENV

BROWSER_AGENTS = frozenset({"claude"})
"""CLIs whose browser turns the frontend ticket is scripted and tested for (real Claude Code
with the Playwright MCP server); the stand-in has no MCP client."""


class PreflightError(InputError):
    """A requirement of the chosen mode is missing on this machine."""


def _executable(path: str | None) -> bool:
    return bool(path) and Path(str(path)).is_file() and os.access(str(path), os.X_OK)


def frontend_missing(agent: str, browser_env: dict[str, str]) -> str | None:
    """What ``--frontend`` lacks here (the first of: the CLI, Chromium, the MCP server)."""
    if agent not in BROWSER_AGENTS:
        names = ", ".join(sorted(BROWSER_AGENTS))
        return (
            f"--frontend needs a CLI that drives the browser ({names}); --agent {agent} "
            "cannot (the stand-in has no MCP client): pass --agent claude"
        )
    browser = browser_env.get(BROWSER_ENV) or shutil.which("chromium")
    if not _executable(browser):
        return (
            "--frontend needs Chromium (apt-get install chromium, or set "
            f"{BROWSER_ENV} to its path); none found"
        )
    if not _executable(browser_env.get(PLAYWRIGHT_MCP_BIN_ENV)):
        return (
            "--frontend needs the Playwright MCP server (.ci/run installs it into "
            ".veranda/bin/playwright-mcp); none found"
        )
    return None


def check_demo(agent: str, frontend: bool) -> None:
    """Raise ``PreflightError`` (one line, exit 2) when the chosen demo cannot run here."""
    from veranda_dagster.cli.sandbox_check import refuse_without_sandbox
    from veranda_dagster.sim.sim_vendors import (
        AgentNotInstalledError,
        browser_env,
        require_binary,
    )

    refuse_without_sandbox()
    if agent != "sim":
        try:
            require_binary(agent)
        except AgentNotInstalledError as exc:
            raise PreflightError(str(exc)) from None
    if frontend:
        missing = frontend_missing(agent, browser_env())
        if missing:
            raise PreflightError(missing)
