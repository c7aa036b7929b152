"""OpenAI Codex CLI: ``codex exec --json``.

Modes: an OpenAI API key (``CODEX_API_KEY``/``OPENAI_API_KEY``), a ChatGPT login stored in
``~/.codex/auth.json``, and Azure OpenAI. Reads AGENTS.md; MCP in ``.codex/config.toml``.
Effort is the ``model_reasoning_effort`` config key; images go by ``--image``. Inside the pod
the container is the sandbox, so the CLI's own sandbox is bypassed (codex platform-sandboxing
docs), and the shell env policy is pinned so our keys never reach tool subprocesses.
Stream shape: ``thread.started`` / ``turn.started`` / ``item.*`` / ``turn.completed`` with
``usage`` (input includes cached) or ``turn.failed`` / ``error`` [D: codex exec JSONL docs].
"""

from __future__ import annotations

from typing import ClassVar

from veranda_dagster.backends.adapters._base import (
    CliAdapter,
    ModeSpec,
    StreamSummary,
    as_int,
    json_lines,
    require_terminal,
)
from veranda_dagster.backends.port import Turn
from veranda_dagster.backends.registry import AdapterInfo, register
from veranda_dagster.domain.models import Usage

ENV_POLICY = (
    "-c",
    'shell_environment_policy.inherit="core"',
    "-c",
    "shell_environment_policy.ignore_default_excludes=false",
)


def parse_codex_stream(stdout: str) -> StreamSummary:
    s = StreamSummary()
    messages: list[str] = []
    for ev in json_lines(stdout, "codex"):
        s.events += 1
        kind = ev.get("type")
        if kind == "thread.started":
            s.session_id = ev.get("thread_id")
        elif kind == "item.completed":
            item = ev.get("item") or {}
            if item.get("type") in ("agent_message", "assistant_message") and item.get("text"):
                messages.append(item["text"])
        elif kind == "turn.completed":
            s.terminal = True
            u = ev.get("usage") or {}
            total_in = as_int(u.get("input_tokens"))
            cached = as_int(u.get("cached_input_tokens"))
            s.usage = Usage(
                input=max(total_in - cached, 0),
                cached=cached,
                output=as_int(u.get("output_tokens")),
                reasoning=as_int(u.get("reasoning_output_tokens")),
            )
        elif kind == "turn.failed":
            s.error = ((ev.get("error") or {}).get("message")) or "turn.failed"
        elif kind == "error":
            s.error = ev.get("message") or "error"
    s.text = messages[-1] if messages else ""
    return require_terminal(s, "codex", "turn.completed")


class CodexAdapter(CliAdapter):
    family = "codex"
    default_binary = "codex"
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
    vision = True
    effort_knob = "-c model_reasoning_effort"
    effort_values: ClassVar[dict[str, str]] = {"low": "low", "medium": "medium", "high": "high"}
    model_flag = "--model"
    base_url_env = "OPENAI_BASE_URL"
    quiet_env: ClassVar[dict[str, str]] = {"CODEX_DISABLE_UPDATE_CHECK": "1", "NO_COLOR": "1"}
    terminal_event = "turn.completed"

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
            base = self.config.base_url or self.env().get("AZURE_OPENAI_BASE_URL")
            if base:
                argv += ["-c", f'model_providers.azure.base_url="{base}"']
        if turn.model:
            argv += ["--model", turn.model]
        if turn.effort_value:
            argv += ["-c", f'model_reasoning_effort="{turn.effort_value}"']
        for image in turn.images:
            argv += ["--image", image]
        argv += ["--", turn.prompt]
        return argv

    @classmethod
    def parse_stream(cls, stdout: str) -> StreamSummary:
        return parse_codex_stream(stdout)


register(AdapterInfo("codex", tuple(CodexAdapter.modes), rank=20, factory=CodexAdapter))
