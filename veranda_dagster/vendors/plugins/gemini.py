"""Gemini CLI: ``gemini -p -o stream-json``.

Modes: a Gemini API key, a Google login (``oauth-personal``, stored in
``~/.gemini/oauth_creds.json``) and Vertex AI. Reads GEMINI.md; MCP in ``.gemini/settings.json``.
No reasoning-effort flag on the command line (thinking is a settings.json model config), so
effort degrades to the CLI default with a note. Images are attached as ``@path`` references.
Stream events per geminicli.com headless docs, verified on 0.61.0 against the loopback Gemini
API: init (``model`` is "auto" when the router picks), message (``delta`` chunks), tool_use,
tool_result, error, result (``status``, ``stats`` with uncached ``input``, ``cached`` and a
per-model breakdown that includes the router's own flash-lite call); exit 0 ok, 1 API failure,
41 auth config, 42 bad input, 53 turn limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Tier
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sandbox.egress import QUERY_KEY, X_GOOG_API_KEY, KeyCarrier
from veranda_dagster.vendors.plugins._base import CliVendor, Install, ModeSpec
from veranda_dagster.vendors.plugins._streams import StreamSummary, UsageKeys, model_names
from veranda_dagster.vendors.port import Turn
from veranda_dagster.vendors.rates import Rate, models_dev
from veranda_dagster.vendors.registry import VendorInfo

GEMINI_USAGE = UsageKeys("input", "output_tokens", "cached", reasoning="thoughts")
"""``stats`` with its uncached ``input``."""
GEMINI_TOTAL_INPUT_USAGE = replace(GEMINI_USAGE, input="input_tokens", input_counts_cached=True)
"""``stats`` without ``input``: its ``input_tokens`` counts the cached tokens too."""


def parse_gemini_stream(stdout: str) -> StreamSummary:
    s = StreamSummary()
    chunks: list[str] = []
    for kind, ev in s.read_events(stdout, "gemini"):
        if kind == "init":
            s.model = ev.get("model") if ev.get("model") != "auto" else None
            s.session_id = ev.get("session_id")
        elif kind == "message" and ev.get("role") == "assistant":
            content = ev.get("content")
            if isinstance(content, str):
                chunks.append(content)
        elif kind == "error" and ev.get("severity", "error") == "error":
            s.error = ev.get("message") or "error"
        elif kind == "result":
            s.terminal = True
            stats = ev.get("stats") or {}
            has_uncached = isinstance(stats.get("input"), int)
            s.usage = (GEMINI_USAGE if has_uncached else GEMINI_TOTAL_INPUT_USAGE).read(stats)
            models = model_names(stats.get("models"))
            if models:  # the router's cheap call comes first; the turn's model last
                s.model = models[-1]
            if ev.get("status", "success") != "success":
                err = ev.get("error") or {}
                s.error = f"{err.get('type', 'error')}: {err.get('message', ev.get('status'))}"
    s.text = "".join(chunks)
    return s.require_terminal("gemini", "result")


class GeminiVendor(CliVendor):
    vendor = "gemini"
    default_binary = "gemini"
    token_patterns: ClassVar[tuple[TokenShape, ...]] = (
        TokenShape(
            "google_api_key",
            r"AIza[0-9A-Za-z_-]{30,}",
            "AIzaSy" + "Dq9_x-Lm2Kp7Rt4Vw8Yz1Bc5Fg3H",
            "gitleaks rules/gcp.go: AIza[\\w-]{35}",
        ),
        TokenShape(
            "google_oauth_access_token",
            r"ya29\.[0-9A-Za-z_-]{20,}",
            "ya29." + "a0AfH6SMBx-Qz_9" * 4,
            "unverified: Google OAuth 2.0 access tokens as the login mode's oauth_creds.json "
            "holds them; not checked against a stored token here",
        ),
        TokenShape(
            "google_oauth_refresh_token",
            r"1//0[0-9A-Za-z_-]{20,}",
            "1//0" + "gLx9-Kq_7Zt3Vb" * 3,
            "unverified: Google OAuth 2.0 refresh tokens ('1//0' prefix); not checked here",
        ),
    )
    modes: ClassVar[dict[str, ModeSpec]] = {
        "api_key": ModeSpec("api_key", required_env=("GEMINI_API_KEY",)),
        "login": ModeSpec("login", login=True, credential_paths=("~/.gemini/oauth_creds.json",)),
        "vertex": ModeSpec(
            "vertex",
            required_env=("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
            any_env=("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_API_KEY"),
            fixed_env={"GOOGLE_GENAI_USE_VERTEXAI": "true"},
            base_url_env="GOOGLE_VERTEX_BASE_URL",
        ),
    }
    instruction_file = "GEMINI.md"
    mcp_format = "gemini_settings"
    repo_agent_config = (".gemini",)
    installs = (Install("npm", "@google/gemini-cli", "0.61.0", "GEMINI_CLI_VERSION"),)
    """``.gemini/``: ``settings.json`` (MCP servers, hooks, tool allow lists), extensions and
    custom commands whose ``!{...}`` runs shell."""
    tiers: ClassVar[Mapping[Tier, str]] = {
        "cheap": "gemini-3.5-flash-lite",
        "standard": "gemini-3.8-flash",
        "high": "gemini-3.1-pro-preview",
    }
    model_prefixes = ("gemini-",)
    rates: ClassVar[Mapping[str, Rate]] = {
        "gemini-3.1-pro-preview": models_dev(2, 12, 0.2),
        "gemini-3.8-flash": models_dev(0.75, 3.75, 0.075),
        "gemini-flash-latest": models_dev(0.75, 3.75, 0.075),
        "gemini-3.5-flash-lite": models_dev(0.3, 2.5, 0.03),
    }
    rate_prefixes = ("google/",)
    secret_env = ("GEMINI_API_KEY",)
    vision = True
    effort_knob = None
    model_flag = "--model"
    base_url_env = "GOOGLE_GEMINI_BASE_URL"
    default_base_urls: ClassVar[Mapping[str, str]] = {
        "api_key": "https://generativelanguage.googleapis.com"
    }
    key_carriers: ClassVar[Mapping[str, tuple[KeyCarrier, ...]]] = {
        "GEMINI_API_KEY": (X_GOOG_API_KEY, QUERY_KEY),
    }
    unproxied_modes: ClassVar[Mapping[str, str]] = {
        "login": "a Google login is a session file (oauth_creds.json) the CLI refreshes itself",
        "vertex": "Vertex requests carry OAuth tokens minted from service-account credentials "
        "inside the CLI",
    }
    quiet_env: ClassVar[dict[str, str]] = {
        "GEMINI_TELEMETRY_ENABLED": "false",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",  # else --yolo is downgraded in an untrusted clone
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "NO_COLOR": "1",
    }
    writes_home_settings = True
    auth_types: ClassVar[dict[str, str]] = {
        "api_key": "gemini-api-key",
        "login": "oauth-personal",
        "vertex": "vertex-ai",
    }

    def env_for(self, turn: Turn) -> dict[str, str]:
        env = self.env()
        if self.upstream_base_url():
            # With GOOGLE_GEMINI_BASE_URL set, 0.61.0 derives auth type "gateway", which headless
            # mode rejects ("Invalid auth method selected", exit 41), and it refuses settings
            # files under a world-writable /tmp; so name the mode's auth type in the user
            # settings of a home we own: this turn's private home (a copy of ``config.home``, or
            # an empty one: ``writes_home_settings``), removed with the turn.
            if self.home_dir is None:
                raise ConfigError("gemini: its settings are written only inside turn_home()")
            home = Path(self.home_dir)
            env["HOME"] = str(home)
            self._write_settings(home / ".gemini" / "settings.json")
        return env

    def _write_settings(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            settings = json.loads(path.read_text()) if path.exists() else {}
        except json.JSONDecodeError:
            settings = {}
        settings.setdefault("security", {}).setdefault("auth", {})["selectedType"] = (
            self.auth_types[self.mode]
        )
        settings.setdefault("general", {})["disableAutoUpdate"] = True
        settings.setdefault("privacy", {})["usageStatisticsEnabled"] = False
        path.write_text(json.dumps(settings))

    def build_argv(self, turn: Turn) -> list[str]:
        """The prompt is piped: Gemini reads stdin (up to 8 MiB) when it is not a terminal and
        puts ``-p``'s text after it, so ``-p`` carries only the ``@path`` image references."""
        argv = [self.binary]
        if turn.images:
            argv += ["-p", " ".join(f"@{p}" for p in turn.images)]
        return [*argv, "-o", "stream-json", "--yolo", *self.model_args(turn)]

    parse_stream = staticmethod(parse_gemini_stream)


PLUGIN = VendorInfo("gemini", tuple(GeminiVendor.modes), rank=30, factory=GeminiVendor)
