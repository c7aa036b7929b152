"""Two ``veranda dev`` at once, as two people on one machine start them: each writes its own
state file, ``veranda sim`` says which one it drives when both run, and stopping the second
leaves the first's file and world alone (before, the second took over the one shared file and
deleted it when it stopped, so ``veranda sim status`` said no world ran while the first did)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.e2e.dagster_ui import wait_for
from veranda_dagster.cli.dev_state import STATE_DIR_ENV, STATE_ENV
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.sources.push_launch import PUSH_TAG

pytestmark = pytest.mark.dagster_ui

START_TIMEOUT_S = 420.0
"""Both dagster dev processes up on two busy cores."""
PUSHED_RUN_BOUND_S = 45.0
"""The pushed run exists by then on two busy cores (quiet: 1-2 s); the run's own tag says
whether the push or the 60 s poll created it."""
DEV_ARGS = ("--agent", "sim", "--no-sample")
CLI = "import sys; from veranda_dagster.cli import main; sys.exit(main(sys.argv[1:]))"


def _env(states: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != STATE_ENV}
    return {**env, STATE_DIR_ENV: str(states)}


def _start(states: Path, workdir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, "dev", *DEV_ARGS, "--workdir", str(workdir)],
        env=_env(states),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
    return out


def _up(states: Path, proc: subprocess.Popen[str]) -> dict:
    """The process's state once its banner printed (the UI is up)."""
    path = states / f"{proc.pid}.json"

    def ready() -> dict | None:
        if proc.poll() is not None:
            raise AssertionError(f"veranda dev exited {proc.returncode}: {_stop(proc)[-3000:]}")
        if not path.exists():
            return None
        info = json.loads(path.read_text())
        return info if info.get("control_url") else None

    info = wait_for(f"veranda dev {proc.pid}", ready, START_TIMEOUT_S, 2)
    return info


def _intake_up(states: Path, proc: subprocess.Popen[str]) -> dict:
    """The process's state once its push intake is listening (``intake_url`` set)."""
    path = states / f"{proc.pid}.json"

    def ready() -> dict | None:
        if proc.poll() is not None:
            raise AssertionError(f"veranda dev exited {proc.returncode}: {_stop(proc)[-3000:]}")
        info = json.loads(path.read_text())
        if "intake_url" not in info:
            return None
        assert info["intake_url"], "veranda dev did not start its push intake"
        return info

    return wait_for(f"veranda dev {proc.pid}'s intake", ready, START_TIMEOUT_S, 2)


def _pushed_run(home: Path, key: str) -> str | None:
    """The ``veranda/intake`` tag of the ticket's first run, once one exists."""

    def run_tag() -> str | None:
        with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
            runs = instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: key}))
        return runs[-1].tags.get(PUSH_TAG, "poll") if runs else None

    return wait_for(f"{key}'s run", run_tag, PUSHED_RUN_BOUND_S, 0.5)


def _sim(states: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, "sim", *argv],
        env=_env(states),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def two_devs(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str], subprocess.Popen[str]]]:
    states = tmp_path / "states"
    first = _start(states, tmp_path / "a")
    second = None
    try:
        _up(states, first)
        second = _start(states, tmp_path / "b")
        yield states, first, second
    finally:
        for proc in (second, first):
            if proc is not None:
                _stop(proc)


def test_two_dev_keep_their_own_state_and_sim_says_which(two_devs) -> None:
    states, first, second = two_devs
    a = _up(states, first)
    b = _up(states, second)
    assert a["ui_url"] != b["ui_url"] and a["control_url"] != b["control_url"]

    both = _sim(states, "status")
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout)["ui_url"] == b["ui_url"]  # the newest
    assert f"2 veranda dev are running; using the newest, UI {b['ui_url']}" in both.stderr
    a = _intake_up(states, first)
    picked = _sim(states, "--ui", a["ui_url"], "ticket", "Fix the retry bug")
    assert picked.returncode == 0 and picked.stderr == "", picked.stderr
    assert picked.stdout.startswith("filed ENG-101: http://127.0.0.1:")
    # the fake Linear posted it to the first dev's push intake: its run was created by the push
    assert _pushed_run(Path(a["dagster_home"]), "ENG-101") == "push"

    out = _stop(second)
    assert second.returncode == 0, out[-3000:]
    assert not (states / f"{second.pid}.json").exists()
    assert (states / f"{first.pid}.json").exists()  # the first one's file is not touched
    alone = _sim(states, "notes")
    assert alone.returncode == 0 and alone.stderr == "", alone.stderr
    assert "ENG-101: Fix the retry bug" in alone.stdout  # the first world, still up
