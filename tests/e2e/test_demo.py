"""``veranda demo --agent sim --json``, as a newcomer runs it with nothing installed: one
process, no keys, under two minutes; and ``--tickets jira --forge gitlab --ci-repair``, the same
run from the fake Jira to the fake GitLab with the one grounded CI repair."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from veranda_dagster.sim.driver import instance_for
from veranda_dagster.sim.summary import ASSETS

pytestmark = pytest.mark.slow

WARNING_LINE = re.compile(r"\b\w*Warning\b|warnings\.warn|^\s*warn", re.I | re.M)
"""A line Python's warnings machinery (or a library's logger) printed."""


def demo(workdir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from veranda_dagster.cli import main; sys.exit(main(sys.argv[1:]))",
            "demo",
            "--agent",
            "sim",  # the stand-in; tests/e2e/test_real_cli_pipeline.py runs the real CLIs
            "--json",
            "--workdir",
            str(workdir),
            *flags,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_demo_json_runs_every_asset_to_a_green_pr(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = demo(tmp_path / "demo")
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    # stderr is the demo's own progress lines, no warning (Dagster's BetaWarnings were 228)
    assert not WARNING_LINE.search(proc.stderr), proc.stderr[-3000:]
    assert proc.stderr.splitlines()[0].startswith("fakes up: ")
    assert len(proc.stderr.splitlines()) < 10, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)  # stdout is exactly one JSON object
    assert set(summary) == {
        "ticket",
        "assets",
        "pr_url",
        "ci",
        "model_calls_total",
        "dagster_home",
        "run_id",
        "ui_command",
        "rerun_hint",
        "tickets",
        "forge",
        "ci_repair",
        "model_billed_usd",
    }
    assert (summary["tickets"], summary["forge"]) == ("linear", "github")
    # what the assets report is what the scripted model billed, to the micro-dollar
    reported = sum(a["usd"] for a in summary["assets"].values())
    assert abs(summary["model_billed_usd"] - reported) < 1e-5 and reported > 0
    assert summary["ci_repair"] == {"repairs": 0, "grounding": "none", "violations": 0}
    home = tmp_path / "demo" / "dagster_home"
    assert summary["dagster_home"] == str(home) and (home / "dagster.yaml").is_file()
    assert f"DAGSTER_HOME={home} dagster dev" in summary["ui_command"]
    assert "veranda dev" in summary["rerun_hint"]
    with instance_for(str(home)) as instance:  # the run id names the run in that home
        run = instance.get_run_by_id(summary["run_id"])
        assert run is not None and run.tags["dagster/partition"] == summary["ticket"]
    assert summary["ticket"] == "ENG-101" and summary["ci"] == "success"
    assert summary["pr_url"].endswith("/acme/billing/pull/1")
    assert list(summary["assets"]) == list(ASSETS)
    assert {a["status"] for a in summary["assets"].values()} == {"materialized"}
    assert summary["model_calls_total"] == sum(a["model_calls"] for a in summary["assets"].values())
    calls = {k: v["model_calls"] for k, v in summary["assets"].items() if v["model_calls"]}
    # confirmer; test writer; implementer + independent tester; simplifier, 2 reviews, 1 fix
    assert calls == {"repo_guess": 1, "red_tests": 1, "patch": 2, "review_rounds": 4}
    assert all(summary["assets"][k]["usd"] > 0 for k in calls)
    assert elapsed < 120, f"demo took {elapsed:.0f} s"


@pytest.mark.real_cli_slow  # a second whole demo run: its own .ci/run step, beside the real CLIs
def test_demo_from_jira_to_gitlab_with_the_one_grounded_repair(tmp_path: Path) -> None:
    workdir = tmp_path / "demo"
    proc = demo(workdir, "--tickets", "jira", "--forge", "gitlab", "--ci-repair")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert (summary["tickets"], summary["forge"]) == ("jira", "gitlab")
    assert summary["ticket"] == "jira-PAY-101" and summary["ci"] == "success"
    assert "/acme/billing/-/merge_requests/1" in summary["pr_url"]
    assert summary["ci_repair"] == {"repairs": 1, "grounding": "violations", "violations": 3}
    assert {a["status"] for a in summary["assets"].values()} == {"materialized"}
    assert "tickets jira http://127.0.0.1:" in proc.stderr  # the log goes to stderr with --json
    bare = workdir / "org" / "git" / "acme" / "billing.git"
    log = subprocess.run(
        ["git", f"--git-dir={bare}", "log", "--format=%s", "main..veranda/jira-pay-101"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert log[0] == "fix(jira-PAY-101): repair CI"  # pushed to the GitLab fake over http
