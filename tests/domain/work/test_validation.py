"""``run_command``/``run_validation``: bounded in time (whole process group) and in bytes, with
an environment that carries no secrets."""

import os
import time
from pathlib import Path

from veranda_dagster.domain.core.models import RepoFacts
from veranda_dagster.domain.work.validation import run_command, run_validation, validation_commands


def _alive_with(marker: str) -> list[int]:
    """Host pids (any namespace) whose command line holds ``marker`` and are not zombies."""
    alive = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            alive.append(int(proc.name))
    return alive


def test_a_hanging_command_is_killed_at_its_bound_with_its_children(tmp_path):
    """``VALIDATION_TIMEOUT_S`` (through the ``timeout_s`` it feeds, one second here) against
    a shell whose two children sleep: killed at the bound, the children with it."""
    marker = f"{30 + os.getpid() % 1000 / 1000:.3f}"  # a sleep no other process runs
    started = time.monotonic()
    result = run_command(f"sleep {marker} & sleep {marker}", tmp_path, timeout_s=1)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.exit_code is None and not result.ok
    assert 1 <= elapsed < 5
    assert "killed after 1s bound" in result.output_tail
    time.sleep(0.2)
    assert _alive_with(f"sleep {marker}") == [], "a child of the shell survived the kill"


def test_output_is_a_tail_bounded_in_bytes(tmp_path):
    result = run_command("seq 1 100000; echo LAST", tmp_path, timeout_s=10, tail_bytes=500)
    assert result.ok and len(result.output_tail.encode()) <= 500
    assert result.output_tail.rstrip().endswith("LAST")


def test_secrets_in_the_service_environment_do_not_reach_the_repo(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_supersecretvalue123456")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    result = run_command("env", tmp_path, timeout_s=10)
    assert result.ok
    assert "supersecret" not in result.output_tail and "sk-ant" not in result.output_tail
    assert "PATH=" in result.output_tail


def test_validation_runs_build_lint_test_in_order_and_reports_each(tmp_path):
    facts = RepoFacts(build=["true"], lint=["echo lint; exit 3"], test=["echo tests"])
    assert validation_commands(facts) == ["true", "echo lint; exit 3", "echo tests"]
    results = run_validation(facts, tmp_path, timeout_s=10)
    assert [r.exit_code for r in results] == [0, 3, 0]
    assert results[1].output_tail == "lint\n" and not results[1].ok
