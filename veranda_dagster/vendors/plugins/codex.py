"""OpenAI Codex CLI: ``codex exec --json``.

Modes: an OpenAI API key (``CODEX_API_KEY``/``OPENAI_API_KEY``), a ChatGPT login stored in
``~/.codex/auth.json``, and Azure OpenAI. Reads AGENTS.md; MCP in ``.codex/config.toml``.
Effort is the ``model_reasoning_effort`` config key; images go by ``--image``. Inside the pod
the container is the sandbox, so the CLI's own sandbox is bypassed (codex platform-sandboxing
docs), and the shell env policy is pinned so our keys never reach tool subprocesses and the
agent's commands run on the worker's ``PATH`` (no login shell; see ``ENV_POLICY``).
Stream shape (verified on 0.171.0 against the loopback Responses API): ``thread.started`` /
``turn.started`` / ``item.*`` / ``turn.completed`` with ``usage`` (input includes cached) or
``turn.failed``; ``error`` events are retries unless the turn fails. ``OPENAI_BASE_URL`` is not
honoured by 0.171.0, so the base URL (the configured one, else OpenAI's own) is always given
through a custom ``model_provider``: plain HTTP(S) Responses with no WebSocket attempt (the
built-in provider tries a WebSocket first), one retry. That is what lets the credential proxy,
which refuses protocol upgrades, stand in for the upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from veranda_dagster.domain.core.models import Tier
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.sandbox.egress import BEARER, KeyCarrier
from veranda_dagster.vendors.plugins._base import SAME_EFFORT, CliVendor, Install, ModeSpec
from veranda_dagster.vendors.plugins._streams import StreamSummary, UsageKeys
from veranda_dagster.vendors.port import Turn
from veranda_dagster.vendors.rates import Rate, models_dev
from veranda_dagster.vendors.registry import VendorInfo

OPENAI_URL = "https://api.openai.com/v1"

ENV_POLICY = (
    "-c",
    'shell_environment_policy.inherit="core"',
    "-c",
    "shell_environment_policy.ignore_default_excludes=false",
    "-c",
    "allow_login_shell=false",
)
"""What the agent's own commands see: the worker's core variables (never our keys), with the
worker's ``PATH`` as given. Codex 0.171.0 otherwise runs each command in a login shell
(``bash -lc``), whose ``/etc/profile`` resets ``PATH``: the agent's ``make test`` then ran the
system Python without the project's tools (``No module named pytest``), so the model saw other
test results than the ones the pipeline's own validation (the worker's ``PATH``) acts on."""

CODEX_USAGE = UsageKeys(
    input="input_tokens",
    input_counts_cached=True,
    cached="cached_input_tokens",
    cache_write="cache_write_input_tokens",
    output="output_tokens",
    reasoning="reasoning_output_tokens",
)


def parse_codex_stream(stdout: str) -> StreamSummary:
    """``error`` events are progress ("Reconnecting... 2/5", the WebSocket-to-HTTPS fallback,
    seen on 0.171.0) unless the turn then fails or never completes."""
    s = StreamSummary()
    messages: list[str] = []
    last_error: str | None = None
    for kind, ev in s.read_events(stdout, "codex"):
        if kind == "thread.started":
            s.session_id = ev.get("thread_id")
        elif kind == "item.completed":
            item = ev.get("item") or {}
            if item.get("type") in ("agent_message", "assistant_message") and item.get("text"):
                messages.append(item["text"])
        elif kind == "turn.completed":
            s.terminal = True
            s.usage = CODEX_USAGE.read(ev.get("usage") or {})
        elif kind == "turn.failed":
            s.error = ((ev.get("error") or {}).get("message")) or last_error or "turn.failed"
        elif kind == "error":
            last_error = ev.get("message") or "error"
    if not s.terminal and s.error is None:
        s.error = last_error
    s.text = messages[-1] if messages else ""
    return s.require_terminal("codex", "turn.completed")


class CodexVendor(CliVendor):
    vendor = "codex"
    default_binary = "codex"
    token_patterns: ClassVar[tuple[TokenShape, ...]] = (
        TokenShape(
            "openai_project_key",
            r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",
            "sk-proj-" + "Sevz_WEV-Nm" * 7 + "T3BlbkFJ" + "dD9Fq-O9Z_3B" * 6,
            "gitleaks rules/openai.go: sk-(proj|svcacct|admin)-…T3BlbkFJ…",
        ),
        TokenShape(
            "openai_legacy_key",
            r"sk-[A-Za-z0-9]{20,}",
            "sk-" + "a1B2c3D4e5F6g7H8i9J0" + "T3BlbkFJ" + "k1L2m3N4o5P6q7R8s9T0",
            "gitleaks rules/openai.go: sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}",
        ),
    )
    modes: ClassVar[dict[str, ModeSpec]] = {
        "api_key": ModeSpec("api_key", any_env=("CODEX_API_KEY", "OPENAI_API_KEY")),
        "login": ModeSpec("login", login=True, credential_paths=("~/.codex/auth.json",)),
        "azure": ModeSpec(
            "azure",
            required_env=("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_BASE_URL"),
        ),
    }
    instruction_file = "AGENTS.md"
    mcp_format = "codex_toml"
    repo_agent_config = (".codex",)
    installs = (Install("npm", "@openai/codex", "0.171.0", "CODEX_VERSION"),)
    """``.codex/config.toml`` (MCP servers, hooks, sandbox and approval policy, model providers
    with their own commands) and whatever else the project layer of ``.codex/`` holds."""
    tiers: ClassVar[Mapping[Tier, str]] = {
        "cheap": "gpt-6-luna",  # [?] judgement, not from the reference notes
        "standard": "gpt-5.3-codex",
        "high": "gpt-5.5",
    }
    model_prefixes = ("gpt-", "o3", "o4", "codex-")
    rates: ClassVar[Mapping[str, Rate]] = {
        "gpt-6-sol": models_dev(2, 10, 0.2),
        "gpt-6-luna": models_dev(0.1, 0.5, 0.01),
        "gpt-6-astra": models_dev(10, 50, 1),
        "gpt-5.5": models_dev(5, 30, 0.5),
        "gpt-5.3-codex": models_dev(1.75, 14, 0.175),
    }
    rate_prefixes = ("openai/",)
    secret_env = ("OPENAI_API_KEY",)
    vision = True
    effort_knob = "-c model_reasoning_effort"
    effort_values: ClassVar[Mapping[str, str]] = SAME_EFFORT
    model_flag = "--model"
    base_url_env = "OPENAI_BASE_URL"
    default_base_urls: ClassVar[Mapping[str, str]] = {"api_key": OPENAI_URL}
    key_carriers: ClassVar[Mapping[str, tuple[KeyCarrier, ...]]] = {
        "OPENAI_API_KEY": (BEARER,),
        "CODEX_API_KEY": (BEARER,),
        "AZURE_OPENAI_API_KEY": (KeyCarrier(header="api-key"), BEARER),
    }
    unproxied_modes: ClassVar[Mapping[str, str]] = {
        "login": "a ChatGPT login is a session file (auth.json) the CLI reads and refreshes",
    }
    quiet_env: ClassVar[dict[str, str]] = {"CODEX_DISABLE_UPDATE_CHECK": "1", "NO_COLOR": "1"}
    home_env = ("CODEX_HOME", ".codex")

    def env_for(self, turn: Turn) -> dict[str, str]:
        env = self.env()
        if "CODEX_HOME" in env:  # codex refuses a CODEX_HOME that does not exist
            Path(env["CODEX_HOME"]).mkdir(parents=True, exist_ok=True)
        return env

    def build_argv(self, turn: Turn) -> list[str]:
        argv = [self.binary, "exec", "--json", "--skip-git-repo-check", "-C", turn.workdir]
        argv += ["--dangerously-bypass-approvals-and-sandbox", *ENV_POLICY]
        argv += ["-c", "analytics.enabled=false"]
        if self.mode == "azure":
            argv += [
                "-c",
                'model_provider="azure"',
                "-c",
                'model_providers.azure.env_key="AZURE_OPENAI_API_KEY"',
                "-c",
                'model_providers.azure.name="Azure"',
            ]
            base = self.upstream_base_url()
            if base:
                argv += ["-c", f'model_providers.azure.base_url="{base}"']
        elif (base := self.upstream_base_url()) is not None:
            # the provider of our own, also toward OpenAI itself: plain HTTP Responses (the
            # built-in provider tries a WebSocket first), which the credential proxy serves
            argv += _provider_override(base, self._key_env())
        argv += self.model_args(turn)
        if turn.effort_value:  # a config key, not a flag
            argv += ["-c", f'model_reasoning_effort="{turn.effort_value}"']
        for image in turn.images:
            argv += ["--image", image]
        argv += ["--", "-"]  # ``-``: the instructions are read from stdin
        return argv

    def upstream_base_url(self) -> str | None:
        if self.mode == "azure":
            return self.config.base_url or self.credential_env().get("AZURE_OPENAI_BASE_URL")
        return super().upstream_base_url()

    def _key_env(self) -> str:
        """The variable the provider reads its key from: whichever the deployment set."""
        env = self.credential_env()
        only_codex = "CODEX_API_KEY" in env and "OPENAI_API_KEY" not in env
        return "CODEX_API_KEY" if only_codex else "OPENAI_API_KEY"

    parse_stream = staticmethod(parse_codex_stream)


def _provider_override(base_url: str, key_env: str = "OPENAI_API_KEY") -> list[str]:
    pairs = {
        "model_provider": '"veranda"',
        "model_providers.veranda.name": '"veranda"',
        "model_providers.veranda.base_url": f'"{base_url}"',
        "model_providers.veranda.env_key": f'"{key_env}"',
        "model_providers.veranda.wire_api": '"responses"',
        "model_providers.veranda.request_max_retries": "1",
        "model_providers.veranda.stream_max_retries": "1",
    }
    return [arg for key, value in pairs.items() for arg in ("-c", f"{key}={value}")]


PLUGIN = VendorInfo("codex", tuple(CodexVendor.modes), rank=20, factory=CodexVendor)
