"""Grok Build CLI (xAI): ``grok -p --output-format streaming-json``.

Modes: ``grok login`` OAuth (``~/.grok/auth.json``) and ``XAI_API_KEY``. Reads AGENTS.md and
CLAUDE.md; MCP is TOML ``[mcp_servers.x]`` in ``.grok/config.toml`` (format id ``grok_toml``).
Effort is ``--reasoning-effort``; images go headless through ``--prompt-json`` ACP blocks.
Base URL: ``GROK_MODELS_BASE_URL`` (``XAI_API_BASE_URL`` is not honoured by ``-p``). Stream:
``text``/``thought``/``end``/``error``; ``end.usage.input_tokens`` is uncached only; tool calls
are not in the stream. Facts: reference §2, verified on 0.2.111 against a loopback server.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from veranda_dagster.domain.core.bounds import MAX_CLI_ARGV_BYTES
from veranda_dagster.domain.core.models import Tier
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sandbox.egress import BEARER, KeyCarrier
from veranda_dagster.vendors.health import error_rule
from veranda_dagster.vendors.plugins._base import SAME_EFFORT, CliVendor, Install, ModeSpec
from veranda_dagster.vendors.plugins._streams import StreamSummary, UsageKeys, model_names
from veranda_dagster.vendors.port import Turn
from veranda_dagster.vendors.rates import Rate, models_dev
from veranda_dagster.vendors.registry import VendorInfo

AGENT_PATH_ENV = "VERANDA_AGENT_PATH"
SHELL_PROFILE = (
    "# Written by veranda: the agent's commands see the PATH the worker gave this CLI.\n"
    f'if [ -n "${{{AGENT_PATH_ENV}:-}}" ]; then PATH="${AGENT_PATH_ENV}"; export PATH; fi\n'
)
"""Grok 0.2.111 runs each command in the environment of an interactive login shell, so
``/etc/profile`` puts the system's directories before the worker's (the agent's ``make test``
ran the system Python, without the project's tools) and it has no switch to stop that. In a
home the vendor owns (``home`` in the config), the shell's own profile restores the worker's
``PATH``; with the real home the image's ``/usr/local/bin`` leads both, so they agree."""


GROK_USAGE = UsageKeys(  # input_tokens: uncached only
    "input_tokens", "output_tokens", "cache_read_input_tokens", reasoning="reasoning_tokens"
)


def parse_grok_stream(stdout: str) -> StreamSummary:
    s = StreamSummary()
    chunks: list[str] = []
    for kind, ev in s.read_events(stdout, "grok"):
        if kind == "text" and isinstance(ev.get("data"), str):
            chunks.append(ev["data"])
        elif kind == "error":
            s.error = ev.get("message") or "error"
        elif kind == "max_turns_reached":
            s.error = "max_turns_reached"
        elif kind == "end":
            s.terminal = True
            s.session_id = ev.get("sessionId")
            s.usage = GROK_USAGE.read(ev.get("usage") or {})
            s.cost_usd = ev.get("total_cost_usd")
            models = model_names(ev.get("modelUsage"))
            s.model = models[0] if models else None
    s.text = "".join(chunks)
    return s.require_terminal("grok", "end")


class GrokVendor(CliVendor):
    vendor = "grok"
    default_binary = "grok"
    token_patterns: ClassVar[tuple[TokenShape, ...]] = (
        TokenShape(
            "xai_api_key",
            r"xai-[A-Za-z0-9_]{20,}",
            "xai-" + "Gk3_Lm8Np2Qr7St" * 5 + "Uv9Wx",
            "trufflehog detectors/xai: xai-[0-9a-zA-Z_]{80}",
        ),
    )
    modes: ClassVar[dict[str, ModeSpec]] = {
        "api_key": ModeSpec("api_key", any_env=("XAI_API_KEY", "GROK_CODE_XAI_API_KEY")),
        "login": ModeSpec("login", login=True, credential_paths=("~/.grok/auth.json",)),
    }
    instruction_file = "AGENTS.md"
    mcp_format = "grok_toml"
    repo_agent_config = (".grok", ".mcp.json", ".cursor", ".claude")
    installs = (Install("pypi", "grok-cli-bin", "0.2.111", "GROK_CLI_BIN_VERSION"),)
    """``.grok/config.toml`` (``[mcp_servers]``, hooks); Grok also imports ``.mcp.json`` and
    ``.cursor/mcp.json`` servers and reads ``.claude/``, so those are masked for it too."""
    tiers: ClassVar[Mapping[Tier, str]] = {
        "cheap": "grok-4.3",  # [?] judgement, not from the reference notes
        "standard": "grok-4.5",
        "high": "grok-4.7",
    }
    model_prefixes = ("grok-",)
    rates: ClassVar[Mapping[str, Rate]] = {
        "grok-4.7": models_dev(2, 6, 0.5),
        "grok-4.6": models_dev(2, 6, 0.5),
        "grok-4.5": models_dev(2, 6, 0.3),
        "grok-4.3": models_dev(1.25, 2.5, 0.2),
        "grok-build-0.1": models_dev(1, 2, 0.2),
    }
    rate_prefixes = ("xai/",)
    secret_env = ("XAI_API_KEY",)
    vision = True
    effort_knob = "--reasoning-effort"
    effort_values: ClassVar[Mapping[str, str]] = SAME_EFFORT
    model_flag = "-m"
    base_url_env = "GROK_MODELS_BASE_URL"
    default_base_urls: ClassVar[Mapping[str, str]] = {"api_key": "https://api.x.ai/v1"}
    key_carriers: ClassVar[Mapping[str, tuple[KeyCarrier, ...]]] = {
        "XAI_API_KEY": (BEARER,),
        "GROK_CODE_XAI_API_KEY": (BEARER,),
    }
    unproxied_modes: ClassVar[Mapping[str, str]] = {
        "login": "a grok login is a session file (auth.json) the CLI reads and refreshes",
    }
    quiet_env: ClassVar[dict[str, str]] = {
        "GROK_TELEMETRY_ENABLED": "0",
        "GROK_DISABLE_AUTOUPDATER": "1",
        "GROK_MAX_RETRIES": "1",
    }
    trusts_cli_cost = True
    home_env = ("GROK_HOME", ".grok")
    prompt_channel = "file"  # ``--prompt-file``
    health_rules = (error_rule("grok_unauthorized", "auth", r"Unauthorized \(401\)|Not signed in"),)

    def env_for(self, turn: Turn) -> dict[str, str]:
        env = self.env()
        home = self.home_dir
        if home and env.get("PATH"):
            env[AGENT_PATH_ENV] = env["PATH"]
            for name in (".bash_profile", ".bashrc"):
                (Path(home) / name).write_text(SHELL_PROFILE)
        return env

    def build_argv(self, turn: Turn) -> list[str]:
        """The prompt goes by ``--prompt-file``. Images go inline as ACP blocks (the one
        headless image input) beside a pointer to that file while they fit the argv bound;
        past it the prompt file names their paths instead."""
        inline = self._inline_images(turn)
        if inline is not None:
            argv = [self.binary, "--prompt-json", inline]
        else:
            argv = [self.binary, "--prompt-file", str(self.prompt_file(turn))]
        argv += ["--cwd", turn.workdir, "--output-format", "streaming-json", "--always-approve"]
        return argv + self.model_args(turn) + self.effort_args(turn)

    def full_prompt(self, turn: Turn) -> str:
        if not turn.images or self._inline_images(turn) is not None:
            return turn.prompt
        return (
            turn.prompt
            + "\n\nAttached images (too large to send inline; read each file):\n"
            + ("\n".join(f"- {p}" for p in turn.images))
        )

    def _inline_images(self, turn: Turn) -> str | None:
        """The ``--prompt-json`` argument (pointer text and image blocks), or None when the
        turn has no images or they would not fit in ``MAX_CLI_ARGV_BYTES``."""
        if not turn.images:
            return None
        total = sum(_size(p) for p in turn.images) * 4 // 3
        if total > MAX_CLI_ARGV_BYTES // 2:
            return None
        return json.dumps(_acp_prompt(self.prompt_pointer(turn), turn.images))

    parse_stream = staticmethod(parse_grok_stream)


def _size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def _acp_prompt(prompt: str, images: list[str]) -> dict[str, object]:
    content: list[dict[str, str]] = [{"type": "text", "text": prompt}]
    for path in images:
        data = base64.b64encode(Path(path).read_bytes()).decode()
        mime = mimetypes.guess_type(path)[0] or "image/png"
        content.append({"type": "image", "mimeType": mime, "data": data})
    return {"type": "acp", "content": content}


PLUGIN = VendorInfo("grok", tuple(GrokVendor.modes), rank=50, factory=GrokVendor)
