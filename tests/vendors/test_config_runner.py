"""Config loading/validation and the real runner: process-group kill, guard, missing binary."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

import pytest

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.sandbox import Sandbox
from veranda_dagster.vendors import registry, runner
from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.resolver import build_agent
from veranda_dagster.vendors.runner import (
    CredentialFileLogin,
    RealCliBlockedError,
    SubprocessRunner,
)
from veranda_dagster.vendors.vendor_config import VendorConfig


def test_default_config_lists_every_registered_vendor_in_rank_order():
    """Derived from the registry (an eighth vendor needs no edit here): every vendor, ordered
    by each vendor's declared rank."""
    fams = [f.vendor for f in VendorsConfig.load(None).vendors]
    assert fams == registry.vendors()
    ranks = [registry.get(f).rank for f in fams]
    assert ranks == sorted(ranks) and len(set(fams)) == len(fams) > 0


def test_load_yaml_and_json(tmp_path):
    y = tmp_path / "b.yaml"
    y.write_text(
        "vendors:\n"
        "  - vendor: claude\n"
        "    modes: [api_key]\n"
        "    binary: /opt/sim/fake-claude\n"
        "    base_url: http://127.0.0.1:4010\n"
        "    env: {ANTHROPIC_API_KEY: VERANDA_SIM_ANTHROPIC_KEY}\n"
        "  - vendor: codex\n"
    )
    cfg = VendorsConfig.load(y)
    assert cfg.vendors[0].binary == "/opt/sim/fake-claude"
    assert cfg.modes_of(cfg.vendors[1]) == ["api_key", "login", "azure"]
    j = tmp_path / "b.json"
    j.write_text(json.dumps(cfg.model_dump()))
    assert VendorsConfig.load(j) == cfg


def test_load_from_env_variable(tmp_path, monkeypatch):
    p = tmp_path / "b.json"
    p.write_text('{"vendors": [{"vendor": "gemini"}]}')
    monkeypatch.setenv("VERANDA_VENDORS_CONFIG", str(p))
    assert [f.vendor for f in VendorsConfig.load().vendors] == ["gemini"]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (
            {"vendors": [{"vendor": "claude", "env": {"ANTHROPIC_API_KEY": "sk-ant-123 real"}}]},
            "never a value",
        ),
        ({"vendors": [{"vendor": "claude", "modes": ["oauth2"]}]}, "has no mode 'oauth2'"),
        ({"vendors": [{"vendor": "claude"}, {"vendor": "claude"}]}, "listed twice"),
        ({"vendors": []}, "at least one"),
        ({"vendors": [{"vendor": "claude", "bogus": 1}]}, "bogus"),
    ],
)
def test_bad_config_names_the_problem(tmp_path, data, needle):
    p = tmp_path / "b.json"
    p.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=needle):
        VendorsConfig.load(p)


def test_unknown_vendor_is_named():
    with pytest.raises(ConfigError, match="unknown vendor 'llama'"):
        VendorsConfig(vendors=[VendorConfig(vendor="llama")])


def test_unreadable_or_invalid_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        VendorsConfig.load(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("vendors: [\n")
    with pytest.raises(ConfigError, match="not valid JSON/YAML"):
        VendorsConfig.load(bad)


def test_build_agent_unions_instruction_files_and_mcp_formats():
    agent = build_agent(VendorsConfig.load(None), environ={})
    assert agent.instruction_files() == ["CLAUDE.md", "AGENTS.md", "GEMINI.md"]
    assert set(agent.mcp_formats()) >= {"mcp_json", "codex_toml", "gemini_settings", "cursor_json"}
    assert len(agent.vendors) == sum(len(registry.get(f).modes) for f in registry.vendors())


def test_real_runner_runs_and_captures(tmp_path):
    out = SubprocessRunner().run(
        [
            sys.executable,
            "-c",
            "import sys; print(sys.stdin.read().upper()); print('e', file=sys.stderr)",
        ],
        str(tmp_path),
        {"PATH": "/usr/bin:/bin"},
        "hi",
        10,
    )
    assert (out.exit_code, out.stdout, out.stderr, out.timed_out) == (0, "HI\n", "e\n", False)


def test_real_runner_kills_the_whole_group_at_the_timeout(tmp_path):
    marker = tmp_path / "child-survived"
    child = tmp_path / "child.py"
    child.write_text(f"import time\ntime.sleep(1.5)\nopen({str(marker)!r}, 'w')\n")
    parent = tmp_path / "parent.py"
    parent.write_text(
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, {str(child)!r}])\n"
        "time.sleep(30)\n"
    )
    started = time.monotonic()
    out = SubprocessRunner().run(
        [sys.executable, str(parent)], str(tmp_path), {"PATH": "/usr/bin:/bin"}, None, 0.5
    )
    assert out.timed_out and out.exit_code is None
    assert time.monotonic() - started < 5
    time.sleep(1.6)
    assert not marker.exists(), "the grandchild outlived the timeout"


def test_a_process_that_left_the_group_holds_the_turn_no_longer_than_the_drain(
    tmp_path, monkeypatch
):
    """With the sandbox off a grandchild can leave the group (``setsid``) with the CLI's stdout
    open: the kill does not reach it, and reading the pipes to their end would wait for it.
    ``KILLED_DRAIN_S`` ends the turn with what was read; the escaped process is ours to end."""
    monkeypatch.setattr(runner, "KILLED_DRAIN_S", 0.5)
    pid_file = tmp_path / "escaped.pid"
    escaped = tmp_path / "escaped.py"
    escaped.write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(20)\n"
    )
    parent = tmp_path / "parent.py"
    parent.write_text(
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, {str(escaped)!r}], start_new_session=True)\n"
        "print('partial', flush=True)\n"
        "time.sleep(20)\n"
    )
    started = time.monotonic()
    try:
        out = SubprocessRunner(Sandbox(mode="off")).run(
            [sys.executable, str(parent)], str(tmp_path), {"PATH": "/usr/bin:/bin"}, None, 1.0
        )
        elapsed = time.monotonic() - started
    finally:
        deadline = time.monotonic() + 5
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert out.timed_out and out.exit_code is None
    assert out.stdout == "partial\n" and "held past the kill" in out.stderr
    assert elapsed < 1.0 + 0.5 + 3, f"the turn waited {elapsed:.1f} s for the escaped process"


@pytest.mark.parametrize(
    ("printed", "over"),
    [(None, True), (1024 * 1024, False)],
    ids=["prints-without-end-killed", "prints-exactly-the-bound"],
)
def test_a_cli_printing_past_the_output_bound_is_killed_with_what_was_read(
    tmp_path, monkeypatch, printed, over
):
    """A CLI printing in a loop is killed once its stdout passes ``MAX_CLI_OUTPUT_BYTES``
    (here 1 MiB), long before its time bound, holding exactly the bound; its twin prints the
    bound exactly and exits 0 with all of it and no note."""
    monkeypatch.setattr(runner, "MAX_CLI_OUTPUT_BYTES", 1024 * 1024)
    body = (
        "while True: sys.stdout.write('y' * 65536)"
        if printed is None
        else f"sys.stdout.write('y' * {printed})"
    )
    started = time.monotonic()
    out = SubprocessRunner(Sandbox(mode="off")).run(
        [sys.executable, "-c", f"import sys\n{body}"],
        str(tmp_path),
        {"PATH": "/usr/bin:/bin"},
        None,
        60,
    )
    assert time.monotonic() - started < 20
    assert out.stdout == "y" * 1024 * 1024 and not out.timed_out
    assert (out.exit_code, "output passed 1048576 bytes" in out.stderr) == (
        (None, True) if over else (0, False)
    )


def test_a_cli_that_never_reads_its_prompt_still_ends_at_its_time_bound(tmp_path):
    """A prompt far larger than a pipe holds, to a CLI that never reads it: the write is not
    the caller's to wait on, so the turn ends at its time bound."""
    started = time.monotonic()
    out = SubprocessRunner(Sandbox(mode="off")).run(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        str(tmp_path),
        {"PATH": "/usr/bin:/bin"},
        "p" * (4 * 1024 * 1024),
        1.0,
    )
    assert out.timed_out and time.monotonic() - started < 10


def test_bytes_that_are_not_utf8_are_replaced_not_a_crash(tmp_path):
    out = SubprocessRunner(Sandbox(mode="off")).run(
        [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\r\\nend')"],
        str(tmp_path),
        {"PATH": "/usr/bin:/bin"},
        None,
        10,
    )
    assert (out.exit_code, out.stdout) == (0, "ok \ufffd\nend")


def test_missing_binary_is_127():
    out = SubprocessRunner().run(["/nonexistent/veranda-cli"], None, {}, None, 5)
    assert out.exit_code == 127 and "not found" in out.stderr


@pytest.mark.parametrize("binary", ["claude", "/usr/local/bin/codex", "cursor-agent", "opencode"])
def test_guard_refuses_vendor_binaries_in_tests(binary):
    with pytest.raises(RealCliBlockedError, match="inject a scripted CommandRunner"):
        SubprocessRunner().run([binary, "-p", "hi"], None, {}, None, 5)


def test_credential_file_login(tmp_path):
    login = CredentialFileLogin()
    creds = tmp_path / "auth.json"
    assert not login.ensure("codex", "login", [str(creds)]).ok
    creds.write_text("{}")
    assert login.ensure("codex", "login", [str(creds)]).ok
    d = tmp_path / "credentials"
    d.mkdir()
    assert not login.ensure("kimi", "login", [str(d)]).ok
    (d / "token").write_text("t")
    assert login.ensure("kimi", "login", [str(d)]).ok
