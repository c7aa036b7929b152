"""Backends config that points the product's real adapters at the scripted model server.

Claude Code (``api_key`` then ``login`` mode) and GLM's Claude Code mode both run the
``veranda-sim-agent`` stand-in with ``base_url`` = the model server: the adapters, their env
assembly, stream parsing, health probes and fallback are the product's own. The config holds
only variable *names* (``SIM_*``), as the product requires; ``sim_environ`` holds the fake
values, which tests scan every output for.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

SIM_KEYS = {
    "SIM_ANTHROPIC_API_KEY": "sk-ant-api03-SIMULATED-anthropic-key-7f3a",
    "SIM_CLAUDE_OAUTH_TOKEN": "sk-ant-oat01-SIMULATED-oauth-token-91c2",
    "SIM_ZAI_API_KEY": "zai-SIMULATED-glm-key-4d8e",
}
"""Fake credentials the model server accepts; none of them may ever appear in an output."""


def agent_binary(work_dir: str | Path) -> str:
    """The stand-in CLI: the console script when installed, else a wrapper running this
    interpreter (so the demo works from a plain checkout)."""
    installed = Path(sys.executable).parent / "veranda-sim-agent"
    if installed.is_file():
        return str(installed)  # the real script, not a version-manager shim in front of it
    wrapper = Path(work_dir) / "veranda-sim-agent"
    wrapper.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m veranda_dagster.sim.agent_cli "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)


def sim_backends_config(
    model_url: str, binary: str, *, with_glm: bool = True, timeout_s: float = 300.0
) -> dict[str, Any]:
    """A ``BackendsConfig`` document (JSON-able) for the scripted model at ``model_url``."""
    families: list[dict[str, Any]] = [
        {
            "family": "claude",
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
        families.append(
            {
                "family": "glm",
                "modes": ["api_key"],
                "binary": binary,
                "base_url": model_url,
                "env": {"ZAI_API_KEY": "SIM_ZAI_API_KEY"},
                "timeout_s": timeout_s,
            }
        )
    return {"families": families, "probe_timeout_s": 60.0}


def sim_environ(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's env) plus the fake credentials."""
    env = dict(os.environ if base is None else base)
    env.update(SIM_KEYS)
    return env


def model_credentials() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(API keys, bearer tokens) for ``ScriptedModelServer``."""
    return (
        (SIM_KEYS["SIM_ANTHROPIC_API_KEY"],),
        (SIM_KEYS["SIM_CLAUDE_OAUTH_TOKEN"], SIM_KEYS["SIM_ZAI_API_KEY"]),
    )
