"""Cursor Agent CLI: ``cursor-agent -p --output-format stream-json``.

Modes: a Cursor login (subscription) or a dashboard ``CURSOR_API_KEY`` (metered). Reads
AGENTS.md (and CLAUDE.md, ``.cursor/rules``); MCP in ``.cursor/mcp.json``. No headless image
input is documented, so vision is declared False and images are stripped. Effort is baked into
model ids, so there is no knob. The vendor is Cursor's proprietary API: no loopback fake can
stand in, and these facts are docs/community only (reference §4, unverified on a binary).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from veranda_dagster.domain.core.models import Tier
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.vendors.health import error_rule
from veranda_dagster.vendors.plugins._base import CliVendor, ModeSpec
from veranda_dagster.vendors.plugins._streams import StreamSummary, UsageKeys, text_blocks
from veranda_dagster.vendors.port import Turn
from veranda_dagster.vendors.rates import Rate
from veranda_dagster.vendors.registry import VendorInfo

CURSOR_USAGE = UsageKeys("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


def parse_cursor_stream(stdout: str) -> StreamSummary:
    s = StreamSummary()
    texts: list[str] = []
    for kind, ev in s.read_events(stdout, "cursor"):
        if kind == "system" and ev.get("subtype") == "init":
            s.model = ev.get("model")
            s.session_id = ev.get("session_id")
        elif kind == "assistant":
            texts += text_blocks(ev.get("message"))
        elif kind == "result":
            s.terminal = True
            result = ev.get("result")
            s.text = result if isinstance(result, str) else "".join(texts)
            s.usage = CURSOR_USAGE.read(ev.get("usage") or {})
            if ev.get("is_error") or ev.get("subtype") not in (None, "success"):
                s.error = f"{ev.get('subtype')}: {s.text}"
    if not s.text:
        s.text = "".join(texts)
    return s.require_terminal("cursor", "result")


class CursorVendor(CliVendor):
    vendor = "cursor"
    default_binary = "cursor-agent"
    token_patterns: ClassVar[tuple[TokenShape, ...]] = (
        TokenShape(
            "cursor_user_api_key",
            r"key_[0-9a-f]{32,}",
            "key_" + "8c5a7657fc397e114def1b51dd520410" * 2,
            "betterleaks rules/cursor.go: key_[0-9a-f]{64} (CURSOR_API_KEY)",
        ),
        TokenShape(
            "cursor_admin_api_key",
            r"crsr_[A-Za-z0-9_-]{20,}",
            "crsr_" + "b7Xk2Pq9Lm4Rt8Vw" * 3,
            "unverified: 'crsr_' admin API keys are named in public tutorials; the body's "
            "alphabet and length were not checked",
        ),
    )
    modes: ClassVar[dict[str, ModeSpec]] = {
        "login": ModeSpec(
            "login", login=True, credential_paths=("~/.cursor/cli-config.json", "~/.config/cursor")
        ),
        "api_key": ModeSpec("api_key", required_env=("CURSOR_API_KEY",)),
    }
    instruction_file = "AGENTS.md"
    mcp_format = "cursor_json"
    repo_agent_config = (".cursor", ".mcp.json")
    installs = ()  # `agent` is on neither npm nor PyPI: cursor.com's curl installer only
    """``.cursor/``: ``mcp.json`` servers, ``cli.json`` permissions, ``hooks.json``, rules;
    ``.mcp.json``, which Cursor's MCP import also reads."""
    tiers: ClassVar[Mapping[Tier, str]] = {
        "cheap": "composer-2.5",
        "standard": "composer-2.5",
        "high": "gpt-5.5",  # a third-party frontier id Cursor hosts, priced by codex's row
    }
    model_prefixes = ("composer-", "auto")
    rates: ClassVar[Mapping[str, Rate]] = {
        "composer-2.5": Rate(
            input=0.5, output=2.5, cached=0.2, source="token-plan.pages.dev", date="2026"
        ),
        "composer-2": Rate(input=0.5, output=2.5, cached=0.2, source="datacamp", date="2026-03-23"),
        "auto": Rate(
            input=1.25, output=6, cached=0.25, source="Cursor pricing blog", date="2025-12"
        ),
    }
    also_spawns = ("agent",)  # the installer links the CLI under both names
    secret_env = ("CURSOR_API_KEY",)
    vision = False
    effort_knob = None
    base_url_env = "CURSOR_API_BASE_URL"
    unproxied_modes: ClassVar[Mapping[str, str]] = {
        "login": "a Cursor login is a session the CLI keeps and refreshes in its home",
        "api_key": "Cursor's API is proprietary and how its key travels is undocumented, so "
        "no proxy rule can carry it",
    }
    quiet_env: ClassVar[dict[str, str]] = {"NO_COLOR": "1"}
    prompt_channel = "file"  # no stdin prompt is documented: a pointer to the prompt file
    health_rules = (
        # broad (any "log in" or "api key"), so after the shared auth rules and their names
        error_rule(
            "cursor_login", "auth", r"\blog ?in\b|\bapi[ _-]?key\b|authenticat", after_shared=True
        ),
    )

    def build_argv(self, turn: Turn) -> list[str]:
        argv = [self.binary, "-p", "--output-format", "stream-json", "--force", "--trust"]
        argv += ["--workspace", turn.workdir, *self.model_args(turn)]
        return [*argv, "--", self.prompt_pointer(turn)]

    parse_stream = staticmethod(parse_cursor_stream)


PLUGIN = VendorInfo("cursor", tuple(CursorVendor.modes), rank=70, factory=CursorVendor)
