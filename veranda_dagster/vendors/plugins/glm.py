"""GLM (Z.ai / Zhipu) through the CLIs Z.ai documents; it has no headless CLI of its own.

Modes: ``api_key`` runs Claude Code against Z.ai's Anthropic-compatible endpoint
(``ANTHROPIC_AUTH_TOKEN`` = ``ZAI_API_KEY``, the default Opus/Sonnet/Haiku ids pointed at
GLM), so it reads CLAUDE.md and ``.mcp.json``; ``opencode`` runs ``opencode run --format json``
with ``ZHIPU_API_KEY`` (``ZAI_API_KEY`` does nothing there), reading AGENTS.md and MCP from
``opencode.json`` (format id ``opencode_json``). Claude Code's ``total_cost_usd`` prices GLM
as Claude, so cost comes from our own table. Facts: reference §3, verified against loopback.
A vendor ``binary`` override applies to the mode whose CLI it names (``opencode`` or not).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from veranda_dagster.domain.core.models import Tier, Usage
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sandbox.egress import BEARER, KeyCarrier
from veranda_dagster.vendors.plugins._base import SAME_EFFORT, CliVendor, Install, ModeSpec
from veranda_dagster.vendors.plugins._streams import StreamSummary, UsageKeys
from veranda_dagster.vendors.plugins.claude import (
    ClaudeVendor,
    claude_code_argv,
    parse_claude_stream,
)
from veranda_dagster.vendors.port import Capabilities, Turn
from veranda_dagster.vendors.rates import Rate, models_dev
from veranda_dagster.vendors.registry import VendorInfo

ZAI_ANTHROPIC_URL = "https://api.z.ai/api/anthropic"
ZAI_CODING_URL = "https://api.z.ai/api/coding/paas/v4"
"""opencode's ``zai-coding-plan`` endpoint (models.dev's provider entry; unverified offline)."""

OPENCODE_USAGE = UsageKeys("input", "output", "cache.read", "cache.write", "reasoning")
"""A ``step_finish`` part's ``tokens``; the turn's usage is the sum over its steps."""


def parse_opencode_stream(stdout: str) -> StreamSummary:
    s = StreamSummary()
    texts: list[str] = []
    total = Usage()
    for kind, ev in s.read_events(stdout, "glm"):
        part = ev.get("part") or {}
        s.session_id = ev.get("sessionID") or s.session_id
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "step_finish":
            total = total + OPENCODE_USAGE.read(part.get("tokens") or {})
            if part.get("reason") == "stop":
                s.terminal = True
        elif kind == "error":
            err = ev.get("error") or {}
            data = err.get("data") or {}
            s.error = (
                f"{err.get('name', 'error')}: {data.get('message', '')} "
                f"statusCode: {data.get('statusCode')}"
            )
    s.text = "".join(texts)
    s.usage = total
    return s.require_terminal("glm", "step_finish(stop)")


OPENCODE_ZAI_PROVIDERS = ("zai-coding-plan", "zai", "zhipuai-coding-plan", "zhipuai")
"""opencode's GLM providers (all unlocked by ``ZHIPU_API_KEY``); the tier ids name the first."""


def opencode_provider_config(base_url: str) -> str:
    """The config layer opencode reads from ``OPENCODE_CONFIG_CONTENT``: a base-URL override
    for every GLM provider (opencode has no base-URL variable; without this a turn goes to
    Z.ai, or hangs offline), merged over the ``opencode.json`` the turn is shown (the product's
    MCP servers; the repository's own is masked)."""
    providers = {name: {"options": {"baseURL": base_url}} for name in OPENCODE_ZAI_PROVIDERS}
    return json.dumps({"provider": providers, "autoupdate": False, "share": "disabled"})


class GlmVendor(CliVendor):
    vendor = "glm"
    default_binary = "claude"
    token_patterns: ClassVar[tuple[TokenShape, ...]] = (
        TokenShape(
            "zhipu_api_key",
            r"[0-9a-f]{32}\.[A-Za-z0-9]{16}",
            "5371d5ed2fa84618852eee0459455c57.dgquQksHDfyLekKX",
            "Zhipu/Z.ai keys are '<32 hex id>.<16 alphanumeric secret>' (open.bigmodel.cn SDK "
            "docs; seen in public client code)",
        ),
    )
    modes: ClassVar[dict[str, ModeSpec]] = {
        "api_key": ModeSpec("api_key", required_env=("ZAI_API_KEY",)),
        "opencode": ModeSpec("opencode", required_env=("ZHIPU_API_KEY",)),
    }
    instruction_file = "CLAUDE.md"
    mcp_format = "mcp_json"
    repo_agent_config = (".claude", ".mcp.json", "opencode.json", "opencode.jsonc", ".opencode")
    installs = (Install("npm", "opencode-ai", "1.18.33", "OPENCODE_VERSION"),)
    """Both CLIs' project configuration: Claude Code's (``api_key``) ``.claude/`` and
    ``.mcp.json``; opencode's (``opencode`` mode) ``opencode.json[c]`` (``mcp``, permissions,
    providers) and ``.opencode/`` (plugins, commands, agents, tools that run code)."""
    tiers: ClassVar[Mapping[Tier, str]] = {
        "cheap": "glm-5.3-flash",
        "standard": "glm-5.3",
        "high": "glm-5.3",
    }
    mode_tiers: ClassVar[Mapping[str, Mapping[Tier, str]]] = {
        # opencode names provider/model.
        "opencode": {
            "cheap": "zai-coding-plan/glm-5.3-flash",
            "standard": "zai-coding-plan/glm-5.3",
            "high": "zai-coding-plan/glm-5.3",
        },
    }
    model_prefixes = ("glm-", "zai-coding-plan/", "zai/")
    rates: ClassVar[Mapping[str, Rate]] = {
        "glm-5.3": models_dev(1.4, 4.4, 0.26),
        "glm-5.3-flashx": models_dev(0.37, 1.25, 0.075),
        "glm-5.3-flash": models_dev(0.15, 0.5, 0.03),
        "glm-4.7": models_dev(0.6, 2.2, 0.11),
        "glm-4.5-air": models_dev(0.2, 1.1, 0.03),
    }
    rate_prefixes = ("zai/",)
    plan_prefixes = ("zai-coding-plan/",)
    also_spawns = ("opencode",)
    secret_env = ("ZAI_API_KEY", "ZHIPU_API_KEY")
    vision = False  # glm-5.3 text; only -flash is listed with images, and unverified headless
    effort_knob = "--effort"
    effort_values: ClassVar[Mapping[str, str]] = SAME_EFFORT
    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_urls: ClassVar[Mapping[str, str]] = {
        "api_key": ZAI_ANTHROPIC_URL,
        "opencode": ZAI_CODING_URL,
    }
    key_carriers: ClassVar[Mapping[str, tuple[KeyCarrier, ...]]] = {
        "ANTHROPIC_AUTH_TOKEN": (BEARER,),  # Claude Code sends ANTHROPIC_AUTH_TOKEN as Bearer
        "ZHIPU_API_KEY": (BEARER,),  # opencode's OpenAI-compatible GLM providers
    }
    quiet_env: ClassVar[dict[str, str]] = dict(ClaudeVendor.quiet_env)

    @property
    def capabilities(self) -> Capabilities:
        if self.mode != "opencode":
            return super().capabilities
        return Capabilities(
            vision=False,
            instruction_file="AGENTS.md",
            mcp_format="opencode_json",
            effort_knob="--variant",
            model_flag="-m",
            effort_values={"low": "low", "medium": "high", "high": "max"},
        )

    def mcp_by_flag(self) -> bool:
        """Claude Code (``api_key``) takes the servers by flag; opencode reads a file."""
        return self.mode != "opencode"

    @property
    def binary(self) -> str:
        """A vendor ``binary`` runs the mode whose CLI it names: one called ``opencode`` runs
        the opencode mode, any other the Claude Code mode; each mode's default is on PATH."""
        named = self.config.binary
        names_opencode = bool(named) and Path(str(named)).name == "opencode"
        if self.mode == "opencode":
            return str(named) if names_opencode else "opencode"
        return str(named) if named and not names_opencode else self.default_binary

    def adjust_env(self, env: dict[str, str]) -> dict[str, str]:
        if self.mode == "api_key":
            env["ANTHROPIC_AUTH_TOKEN"] = env.pop("ZAI_API_KEY", "")
        else:
            env.pop("ANTHROPIC_BASE_URL", None)
            for k in ClaudeVendor.quiet_env:
                env.pop(k, None)
            env["OPENCODE_DISABLE_AUTOUPDATE"] = "1"
            env["OPENCODE_DISABLE_MODELS_FETCH"] = "1"  # its bundled models.dev snapshot
            base_url = self.upstream_base_url()
            if base_url:
                env["OPENCODE_CONFIG_CONTENT"] = opencode_provider_config(base_url)
        return env

    def env_for(self, turn: Turn) -> dict[str, str]:
        env = self.env()
        if self.mode == "api_key" and turn.model:
            for tier in ("OPUS", "SONNET", "HAIKU"):
                env[f"ANTHROPIC_DEFAULT_{tier}_MODEL"] = turn.model
        return env

    def build_argv(self, turn: Turn) -> list[str]:
        if self.mode != "opencode":
            return claude_code_argv(self, turn)
        # opencode reads the message from stdin when it is not a terminal
        argv = [self.binary, "run", "--format", "json", "--auto"]
        return argv + self.model_args(turn) + self.effort_args(turn)

    def parse(self, stdout: str) -> StreamSummary:
        if self.mode == "opencode":
            return parse_opencode_stream(stdout)
        return parse_claude_stream(stdout, "glm")


PLUGIN = VendorInfo("glm", tuple(GlmVendor.modes), rank=60, factory=GlmVendor)
