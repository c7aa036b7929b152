"""Seams for vendor tests: no test here can spawn a real vendor CLI by accident.

``VERANDA_NO_REAL_CLI=1`` makes the real runner refuse vendor binaries; the real-CLI test
unsets it explicitly. ``ScriptedRunner`` replays recorded outputs and records every call, so
tests assert on the argv and env an vendor really built.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from veranda_dagster.sandbox.egress import Egress
from veranda_dagster.vendors.command import LoginStatus, RunOutput
from veranda_dagster.vendors.isolation import TurnIsolation
from veranda_dagster.vendors.prompt_channel import prompt_file_path
from veranda_dagster.vendors.runner import NO_REAL_CLI_ENV

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vendors"


@pytest.fixture(autouse=True)
def _no_real_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_REAL_CLI_ENV, "1")


@functools.cache
def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text() if name else ""


@functools.cache
def _rows() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load((FIXTURES / "failure_matrix.yaml").read_text()))


def failure_rows() -> list[dict[str, Any]]:
    return list(_rows())


def row_output(row: dict[str, Any]) -> RunOutput:
    return RunOutput(
        exit_code=row.get("exit"),
        stdout=fixture_text(row.get("stdout") or ""),
        stderr=row.get("stderr") or "",
        timed_out=bool(row.get("timed_out")),
    )


@dataclass
class Call:
    argv: list[str]
    cwd: str | None
    env: dict[str, str]
    stdin: str | None
    timeout: float
    prompt_file_text: str | None = None
    """The staged prompt file's text at spawn time (a file-channel CLI), if one was staged."""
    egress: Egress | None = None
    """How the vendor said the turn reaches its model (upstream, key places, or refusal)."""
    isolation: TurnIsolation | None = None
    """What the vendor asked the runner to mask and show for the turn."""


@dataclass
class ScriptedRunner:
    """Replays outputs in order (the last one repeats); or asks ``respond`` per call."""

    outputs: list[RunOutput] = field(default_factory=list)
    respond: Callable[[Call], RunOutput] | None = None
    calls: list[Call] = field(default_factory=list)

    def run(
        self,
        argv: Sequence[str],
        cwd: str | None,
        env: Mapping[str, str],
        stdin: str | None,
        timeout: float,
        *,
        egress: Egress | None = None,
        isolation: TurnIsolation | None = None,
    ) -> RunOutput:
        staged = prompt_file_path(cwd) if cwd else None
        text = staged.read_text() if staged is not None and staged.is_file() else None
        call = Call(list(argv), cwd, dict(env), stdin, timeout, text, egress, isolation)
        self.calls.append(call)
        if self.respond is not None:
            return self.respond(call)
        index = min(len(self.calls) - 1, len(self.outputs) - 1)
        return self.outputs[index]


@dataclass
class FakeLogin:
    ok: bool = True
    asked: list[tuple[str, str]] = field(default_factory=list)

    def ensure(self, vendor: str, mode: str, credential_paths: Sequence[str]) -> LoginStatus:
        self.asked.append((vendor, mode))
        if self.ok:
            return LoginStatus(ok=True, detail="scripted session")
        return LoginStatus(ok=False, detail=f"{vendor}/{mode}: session expired (scripted)")


ALL_KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-test",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth-test",
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "AKIATEST",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-test",
    "ANTHROPIC_VERTEX_PROJECT_ID": "proj",
    "CLOUD_ML_REGION": "us-east5",
    "OPENAI_API_KEY": "sk-openai-test",
    "AZURE_OPENAI_API_KEY": "azure-test",
    "AZURE_OPENAI_BASE_URL": "https://example.openai.azure.com/openai",
    "GEMINI_API_KEY": "gemini-test",
    "GOOGLE_CLOUD_PROJECT": "proj",
    "GOOGLE_CLOUD_LOCATION": "us-central1",
    "GOOGLE_APPLICATION_CREDENTIALS": "/secrets/adc.json",
    "KIMI_MODEL_API_KEY": "kimi-test",
    "XAI_API_KEY": "xai-test",
    "ZAI_API_KEY": "zai-test",
    "ZHIPU_API_KEY": "zhipu-test",
    "CURSOR_API_KEY": "cursor-test",
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/veranda",
    "UNRELATED_SECRET": "must-not-leak",
}
"""An environment where every mode has credentials (tests remove what they revoke)."""
