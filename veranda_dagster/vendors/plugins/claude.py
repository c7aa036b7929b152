"""Claude Code: ``claude -p --output-format stream-json --verbose``.

Modes: an Anthropic API key, a Claude login (``claude setup-token`` OAuth token or a stored
session), Amazon Bedrock and Google Vertex. Tier ids are Claude Code's own aliases
(haiku/sonnet/opus), which it resolves per provider, so moving between modes keeps the model.
Reads CLAUDE.md (not AGENTS.md), MCP from ``.mcp.json``. Stream facts were checked against
2.1.332 on a loopback Anthropic Messages server (tests/vendors/test_real_cli.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from veranda_dagster.domain.core.mcp_config import render_mcp_config
from veranda_dagster.domain.core.models import Tier
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sandbox.egress import BEARER, X_API_KEY, KeyCarrier
from veranda_dagster.vendors.plugins._base import SAME_EFFORT, CliVendor, Install, ModeSpec
from veranda_dagster.vendors.plugins._streams import (
    StreamSummary,
    UsageKeys,
    model_names,
    text_blocks,
)
from veranda_dagster.vendors.port import HealthVerdict, Turn
from veranda_dagster.vendors.rates import Rate, models_dev, scripted
from veranda_dagster.vendors.registry import VendorInfo

OAUTH_TOKEN_ENV = "CLAUDE_CODE_OAUTH_TOKEN"
ANTHROPIC_URL = "https://api.anthropic.com"

ANTHROPIC_USAGE = UsageKeys(
    input="input_tokens",  # already uncached
    cache_write="cache_creation_input_tokens",
    cached="cache_read_input_tokens",
    output="output_tokens",
    reasoning="output_tokens_details.thinking_tokens",
)


def parse_claude_stream(stdout: str, vendor: str = "claude") -> StreamSummary:
    s = StreamSummary()
    last_text = ""
    for kind, ev in s.read_events(stdout, vendor):
        if kind == "system" and ev.get("subtype") == "init":
            s.model = ev.get("model") or s.model
            s.session_id = ev.get("session_id")
        elif kind == "assistant":
            parts = text_blocks(ev.get("message"))
            if parts:
                last_text = "".join(parts)
        elif kind == "result":
            s.terminal = True
            result = ev.get("result")
            s.text = result if isinstance(result, str) else last_text
            s.usage = ANTHROPIC_USAGE.read(ev.get("usage") or {})
            s.cost_usd = ev.get("total_cost_usd")
            models = model_names(ev.get("modelUsage"))
            s.model = s.model or (models[0] if models else None)
            if ev.get("is_error") or str(ev.get("subtype", "")).startswith("error"):
                status = ev.get("api_error_status")
                # Claude Code reports an API error as subtype "success" with is_error: naming
                # that subtype in the cause reads like a bug, so only an error subtype is named
                subtype = str(ev.get("subtype") or "")
                head = f"{subtype}: " if subtype and subtype != "success" else ""
                s.error = f"{head}{s.text} (api_error_status: {status})"
    if not s.text:
        s.text = last_text
    return s.require_terminal(vendor, "result")


class ClaudeVendor(CliVendor):
    vendor = "claude"
    default_binary = "claude"
    token_patterns: ClassVar[tuple[TokenShape, ...]] = (
        TokenShape(
            "anthropic_api_key",
            r"sk-ant-api03-[A-Za-z0-9_-]{20,}",
            "sk-ant-api03-" + "Ab3_dE-9" * 11 + "xAA",
            "gitleaks rules/anthropic.go: sk-ant-api03-[a-zA-Z0-9_-]{93}AA",
        ),
        TokenShape(
            "anthropic_admin_key",
            r"sk-ant-admin01-[A-Za-z0-9_-]{20,}",
            "sk-ant-admin01-" + "Zx8_kQ-2" * 11 + "xAA",
            "gitleaks rules/anthropic.go: sk-ant-admin01-[a-zA-Z0-9_-]{93}AA",
        ),
        TokenShape(
            "claude_oauth_token",
            r"sk-ant-oat01-[A-Za-z0-9_-]{20,}",
            "sk-ant-oat01-" + "Qw7-Er_5" * 11 + "xZQ",
            "gitleaks rules/claude_code.go: sk-ant-oat01- + 95 (CLAUDE_CODE_OAUTH_TOKEN)",
        ),
        TokenShape(
            "claude_oauth_refresh",
            r"sk-ant-ort01-[A-Za-z0-9_-]{20,}",
            "sk-ant-ort01-" + "Rt4_Yu-6" * 11,
            "gitleaks rules/anthropic.go: sk-ant-ort01-[a-zA-Z0-9_-]{40,}",
        ),
    )
    modes: ClassVar[dict[str, ModeSpec]] = {
        "api_key": ModeSpec("api_key", required_env=("ANTHROPIC_API_KEY",)),
        "login": ModeSpec(
            "login",
            optional_env=(OAUTH_TOKEN_ENV,),
            login=True,
            credential_paths=("~/.claude/.credentials.json",),
        ),
        "bedrock": ModeSpec(
            "bedrock",
            required_env=("AWS_REGION",),
            any_env=("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"),
            optional_env=("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
            fixed_env={"CLAUDE_CODE_USE_BEDROCK": "1"},
            base_url_env="ANTHROPIC_BEDROCK_BASE_URL",
        ),
        "vertex": ModeSpec(
            "vertex",
            required_env=("ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION"),
            optional_env=("GOOGLE_APPLICATION_CREDENTIALS",),
            fixed_env={"CLAUDE_CODE_USE_VERTEX": "1"},
            base_url_env="ANTHROPIC_VERTEX_BASE_URL",
        ),
    }
    instruction_file = "CLAUDE.md"
    mcp_format = "mcp_json"
    repo_agent_config = (".claude", ".mcp.json")
    installs = (Install("npm", "@anthropic-ai/claude-code", "2.1.332", "CLAUDE_CODE_VERSION"),)
    """``.claude/``: settings (hooks, ``env``, ``apiKeyHelper``, permission grants,
    ``enableAllProjectMcpServers``), local settings, commands and skills that run shell, agents,
    plugins; ``.mcp.json``: stdio servers. ``ISOLATION_ARGS`` says the same to the CLI itself."""
    # Claude Code aliases resolve per provider (API, Bedrock, Vertex), so a mode switch keeps
    # the model without a per-cloud id table.
    tiers: ClassVar[Mapping[Tier, str]] = {"cheap": "haiku", "standard": "sonnet", "high": "opus"}
    model_prefixes: ClassVar[tuple[str, ...]] = (
        "claude-",
        "anthropic.",
        "us.anthropic.",
        "opus",
        "sonnet",
        "haiku",
    )
    rates: ClassVar[Mapping[str, Rate]] = {
        "claude-opus-5-5": models_dev(4, 20, 0.2),
        "claude-opus-5": models_dev(5, 25, 0.5),
        "claude-opus-4-8": models_dev(5, 25, 0.5),
        "claude-opus-4-7": models_dev(5, 25, 0.5),
        "claude-sonnet-5": models_dev(2, 10, 0.2),
        "claude-sonnet-4-6": models_dev(3, 15, 0.3),
        "claude-haiku-4-5": models_dev(1, 5, 0.1),
        # the loopback scripted model's ids (``sim.agent_cli``), so a metered request to it is
        # priced like any other: the proxy's and the server's own counts must agree
        "claude-opus-sim": scripted(5, 25),
        "claude-sonnet-sim": scripted(3, 15),
        "claude-haiku-sim": scripted(1, 5),
    }
    rate_aliases: ClassVar[Mapping[str, str]] = {
        "opus": "claude-opus-5-5",  # seen: Claude Code 2.1.332 default and ``--model opus``
        "haiku": "claude-haiku-4-5",
    }
    rate_prefixes: ClassVar[tuple[str, ...]] = ("anthropic/",)
    secret_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", OAUTH_TOKEN_ENV)
    vision = True  # reads image files named in the prompt with its Read tool
    effort_knob = "--effort"
    effort_values: ClassVar[Mapping[str, str]] = SAME_EFFORT
    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_urls: ClassVar[Mapping[str, str]] = {
        "api_key": ANTHROPIC_URL,
        "login": ANTHROPIC_URL,  # with a setup token; a session file is refused below
    }
    key_carriers: ClassVar[Mapping[str, tuple[KeyCarrier, ...]]] = {
        "ANTHROPIC_API_KEY": (X_API_KEY,),
        OAUTH_TOKEN_ENV: (BEARER,),  # ``claude setup-token``: an OAuth bearer token
    }
    unproxied_modes: ClassVar[Mapping[str, str]] = {
        "bedrock": "Bedrock requests are SigV4-signed with the AWS key, which a proxy cannot "
        "sign for without holding and using it for arbitrary requests",
        "vertex": "Vertex requests carry Google OAuth tokens minted from service-account "
        "credentials inside the CLI",
    }
    trusts_cli_cost = True
    quiet_env: ClassVar[dict[str, str]] = {
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        "IS_SANDBOX": "1",  # the pod is the sandbox; lets bypassPermissions run as root
    }

    def precheck(self) -> HealthVerdict | None:
        if self.mode == "login" and self._lookup(OAUTH_TOKEN_ENV):
            return None  # a setup-token OAuth token needs no stored session
        return super().precheck()

    def full_prompt(self, turn: Turn) -> str:
        prompt = turn.prompt
        if turn.images:
            prompt += "\n\nAttached images (open each with the Read tool):\n" + "\n".join(
                f"- {p}" for p in turn.images
            )
        return prompt

    def build_argv(self, turn: Turn) -> list[str]:
        return claude_code_argv(self, turn)

    def mcp_by_flag(self) -> bool:
        return True

    parse_stream = staticmethod(parse_claude_stream)


def claude_code_argv(vendor: CliVendor, turn: Turn) -> list[str]:
    """Claude Code headless, for every vendor that runs it (GLM's ``api_key`` mode too): ``-p``
    with no prompt argument reads the prompt from stdin. The repository's hooks and MCP servers
    never run (``ISOLATION_ARGS``, besides the masked ``.claude/`` and ``.mcp.json``), and the
    only MCP servers are the product's, passed inline (no file in the clone)."""
    argv = [vendor.binary, "-p", "--output-format", "stream-json", "--verbose"]
    argv += ["--permission-mode", "bypassPermissions"]
    argv += [*ISOLATION_ARGS, *product_mcp_args(turn)]
    return argv + vendor.model_args(turn) + vendor.effort_args(turn)


ISOLATION_ARGS = (
    "--setting-sources",
    "user,project",
    "--strict-mcp-config",
    "--settings",
    '{"disableAllHooks": true}',
)
"""Measured on Claude Code 2.1.332 (``tests/e2e/test_repo_agent_config.py``):
``--strict-mcp-config`` alone keeps a ``.mcp.json`` server with ``enableAllProjectMcpServers``
from starting, and ``--settings {"disableAllHooks": true}`` alone keeps the project's hooks
from running. ``local`` settings are dropped; ``project`` stays because it also carries
CLAUDE.md (with ``--setting-sources user`` the model no longer sees CLAUDE.md, where the
product's context layers are): the project's settings file itself is masked for the turn."""


def product_mcp_args(turn: Turn) -> list[str]:
    """``--mcp-config <json>`` holding the turn's servers (a command line, no secret), if any."""
    if not turn.mcp_servers:
        return []
    return ["--mcp-config", render_mcp_config(list(turn.mcp_servers), "mcp_json")[1]]


PLUGIN = VendorInfo("claude", tuple(ClaudeVendor.modes), rank=10, factory=ClaudeVendor)
