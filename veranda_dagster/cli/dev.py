"""``veranda dev``: the newcomer's first command — the whole product in the Dagster UI.

Starts the loopback world (fake Linear, Slack, GitHub over real bare repos, the scripted
model server, or a real vendor CLI with ``--agent``) and ``dagster dev`` with its daemon on an
embedded SQLite ``DAGSTER_HOME``, sensors on, wired to the fakes only through configuration
(environment and workspace file). Files a sample ticket, prints the UI URL and how to file
more (``veranda sim ticket``) or inject a fault (``veranda sim fault``), and runs until
Ctrl-C; then it stops every process it started and, unless ``--workdir`` was given, removes
its folder. Runs are launched by the real ``linear_tickets`` sensor through the daemon, so
the UI shows "Launched by sensor", its ticks and cursor; re-execution from failure and
backfills of any phase over one or many tickets work from the UI, because the fakes stay up.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from veranda_dagster.cli.dev_state import STATE_ENV, claim, own_state_path, release
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.sim.sim_vendors import AGENTS, AgentNotInstalledError, default_agent

if TYPE_CHECKING:
    from veranda_dagster.sim.push_intake import IntakeProcess
    from veranda_dagster.sim.world import SimWorld

DEV_MODEL_RETRY_DELAY_S = 5
"""Model phases retry after 5 s here instead of minutes, so an injected 5xx is watchable."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent",
        choices=AGENTS,
        help="the coding CLI that does the turns (default: the first real one installed, "
        "else sim, the stand-in)",
    )
    parser.add_argument("--port", type=int, help="the Dagster UI's port (default: a free one)")
    parser.add_argument(
        "--workdir", help="keep the world and DAGSTER_HOME here (default: a temp dir, removed)"
    )
    parser.add_argument("--no-sample", action="store_true", help="do not file the sample ticket")
    parser.add_argument(
        "--state",
        help=f"state file for veranda sim (default: ${STATE_ENV}, else one file per veranda dev "
        "in the temp dir, which veranda sim finds)",
    )


def dev_env(world_env: dict[str, str], ui_url: str) -> dict[str, str]:
    return {
        **world_env,
        "VERANDA_SENSORS": "running",
        "VERANDA_UI_URL": ui_url,
        "VERANDA_MODEL_RETRY_DELAY_S": str(DEV_MODEL_RETRY_DELAY_S),
    }


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.cli.sandbox_check import refuse_without_sandbox

    refuse_without_sandbox()
    if args.port:
        refuse_taken_port(args.port)
    from veranda_dagster.sim.dagster_dev import free_port

    state_path = own_state_path(args.state)
    port = args.port or free_port()
    # claimed before anything starts (the UI URL is known; the control URL comes with the world)
    claim(state_path, {"pid": os.getpid(), "ui_url": f"http://127.0.0.1:{port}", "control_url": ""})
    try:
        return _run_claimed(args, state_path, port)
    finally:
        release(state_path)


def refuse_taken_port(port: int) -> None:
    """``--port`` already served (another ``veranda dev``?): one line, before anything starts."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise InputError(
                f"--port {port} is already in use on 127.0.0.1 (another veranda dev? "
                "veranda sim status lists them); pick another or leave --port out"
            ) from None


def _run_claimed(args: argparse.Namespace, state_path: Path, port: int) -> int:
    from veranda_dagster.sim.control import SimControl
    from veranda_dagster.sim.dagster_dev import DagsterDev, DagsterDevError
    from veranda_dagster.sim.driver import kill_agents_in
    from veranda_dagster.sim.sample_org import SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
    from veranda_dagster.sim.world import SimWorld

    root = Path(args.workdir or tempfile.mkdtemp(prefix="veranda-dev-"))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        world = SimWorld(root=root / "world", agent=args.agent or default_agent())
    except AgentNotInstalledError as exc:
        sys.stderr.write(f"dev: {exc}\n")
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)
        return 2
    ui = f"http://127.0.0.1:{port}"
    try:
        with world:
            env = dev_env(world.env, ui)
            world.env.update(env)
            world.apply_env()
            _say(
                f"fakes up: linear {world.linear.base_url}, github {world.github.base_url}, "
                f"model {world.model.base_url}; agent {world.agent}"
            )
            info: dict[str, Any] = {
                "ui_url": ui,
                "dagster_home": str(world.dagster_home),
                "pid": os.getpid(),
            }
            with SimControl(world, info) as control:
                info["control_url"] = control.base_url
                claim(state_path, info)
                if not args.no_sample:  # before the daemon starts: its first tick takes it
                    issue = control.file_ticket(
                        {"title": SAMPLE_TICKET_TITLE, "body": SAMPLE_TICKET_BODY}
                    )
                    _say(f"filed {issue['identifier']} in the fake Linear: {SAMPLE_TICKET_TITLE}")
                _say(f"starting dagster dev (DAGSTER_HOME={world.dagster_home}) ...")
                try:
                    dev = DagsterDev(world.dagster_home, env, port=port).start()
                except DagsterDevError as exc:
                    sys.stderr.write(f"dev: {exc}\n")
                    return 1
                intake = _start_intake(world, dev.workspace_path, env)
                info["intake_url"] = intake.linear_url if intake is not None else ""
                claim(state_path, info)  # veranda sim (and a test) can see the push is on
                try:
                    _say(_banner(ui, world.dagster_home, dev.log_path, world.agent, intake))
                    stop.wait()
                finally:
                    _say("stopping dagster dev, the push intake and the fakes ...")
                    if intake is not None:
                        intake.stop()
                    dev.stop()
                    kill_agents_in(world.dagster_home / "workspaces")
    finally:
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


def _start_intake(world: SimWorld, workspace: Path, env: dict[str, str]) -> IntakeProcess | None:
    """The push intake beside ``dagster dev``, with the fake Linear posting each new ticket to
    it; when it cannot start, tickets still arrive by the poll, and the reason is said."""
    from veranda_dagster.cli import one_line
    from veranda_dagster.sim.push_intake import IntakeProcess, IntakeStartError

    _say("starting the push intake (veranda intake serve) ...")
    try:
        intake = IntakeProcess(world.dagster_home, workspace, env).start()
    except IntakeStartError as exc:
        _say(f"push intake not started; tickets arrive by the poll: {one_line(str(exc))}")
        return None
    world.linear.deliver_webhooks(intake.linear_url, intake.secret)
    return intake


def instance_line(home: Path) -> str:
    """The banner's word on bounds: the shipped ``dagster.yaml`` values, or each difference."""
    from veranda_dagster.instance_config import instance_differences, shipped_instance

    actual = yaml.safe_load((home / "dagster.yaml").read_text()) or {}
    changed = instance_differences(actual, shipped_instance())
    if not changed:
        return "the shipped dagster.yaml (10 runs, 4 ticket runs, 4 backfill runs, 1 s queue)"
    return "differs from the shipped dagster.yaml: " + "; ".join(changed)


def _intake_line(intake: IntakeProcess | None) -> str:
    if intake is None:
        return "not running (see above); the poll brings each ticket"
    return (
        f"{intake.linear_url}\n                       (the fake Linear posts each new ticket "
        f"here, signed; its run starts at once)\n                       log: {intake.log_path}"
    )


def _banner(ui: str, home: Path, log: Path, agent: str, intake: IntakeProcess | None) -> str:
    stand_in = (
        "\nAgent:                 sim, a scripted stand-in (no model): it fixes only the "
        "sample's tickets\n                       and refuses any other (the run fails saying "
        "so); --agent claude|codex|... runs a real CLI"
        if agent == "sim"
        else f"\nAgent:                 {agent}, the real CLI (its turns answered by the scripted "
        "model server,\n                       which answers only the sample's tickets)"
    )
    return f"""
Dagster UI: {ui}
  The linear_tickets sensor (on) launches a ticket_run for every ticket filed; watch it under
  Runs, the asset graph under Assets > Lineage (one partition per ticket). Re-execute a failed
  run from failure, or backfill a phase and its downstream over tickets, from the UI.
File another ticket:   veranda sim ticket "Fix the retry bug" --body "repo: acme/billing ..."
Push intake:           {_intake_line(intake)}
Inject a fault:        veranda sim fault model-5xx | revoke-key | ci-red
Failure notes:         veranda sim notes
Instance:              {instance_line(home)}
DAGSTER_HOME:          {home}
Daemon and run logs:   {log}{stand_in}
Ctrl-C stops everything this command started."""
