"""``veranda vendors`` against scripted stand-in binaries (real subprocesses, no vendor CLI)."""

from __future__ import annotations

import json
import sys

import pytest

from tests.vendors.conftest import FIXTURES
from veranda_dagster.cli import main


def stand_in(tmp_path, name: str, fixture: str, code: int = 0, stderr: str = "") -> str:
    """A script that prints a recorded stream; the stream is inlined because the CLI runs in
    the sandbox, which cannot see the test tree."""
    path = tmp_path / name
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.stdout.write({(FIXTURES / fixture).read_text()!r})\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({code})\n"
    )
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("VERANDA_SIM_ANTHROPIC", "sim-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    cfg = {
        "vendors": [
            {
                "vendor": "claude",
                "modes": ["api_key"],
                "binary": stand_in(tmp_path, "fake-claude", "claude_stream_401.jsonl", 1),
                "env": {"ANTHROPIC_API_KEY": "VERANDA_SIM_ANTHROPIC"},
            },
            {
                "vendor": "codex",
                "modes": ["api_key"],
                "binary": stand_in(tmp_path, "fake-codex", "codex_exec_ok.jsonl"),
            },
            {"vendor": "gemini", "modes": ["api_key"]},
        ],
        "probe_timeout_s": 10,
    }
    path = tmp_path / "vendors.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def test_json_report(config, capsys):
    assert main(["vendors", "--json", "--config", config]) == 0
    data = json.loads(capsys.readouterr().out)
    verdicts = {f"{b['vendor']}/{b['mode']}": b["verdict"] for b in data["vendors"]}
    assert verdicts == {"claude/api_key": "auth", "codex/api_key": "ok", "gemini/api_key": "auth"}
    assert data["resolution_order"] == ["codex/api_key"]
    assert data["instruction_files"] == ["CLAUDE.md", "AGENTS.md", "GEMINI.md"]
    assert "sim-key" not in json.dumps(data)


def test_text_report_and_exit_code_when_nothing_serves(config, tmp_path, capsys):
    assert main(["vendors", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "claude/api_key     auth" in out and "resolution order: codex/api_key" in out
    only_gemini = tmp_path / "g.json"
    only_gemini.write_text('{"vendors": [{"vendor": "gemini", "modes": ["api_key"]}]}')
    assert main(["vendors", "--config", str(only_gemini)]) == 1
    assert "GEMINI_API_KEY not set" in capsys.readouterr().out
