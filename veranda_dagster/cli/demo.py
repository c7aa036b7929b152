"""``veranda demo [--agent NAME] [--json]``: the whole pipeline, end to end, with no keys and
no network.

Starts the loopback fakes (Linear, Slack, GitHub over real bare repos, a scripted model server
speaking every vendor's wire format), creates the sample organisation, files a ticket in the
fake Linear, lets the real ``linear_tickets`` sensor pick it up against a
temporary ``DAGSTER_HOME`` (embedded SQLite), runs every asset of the ticket's partition to a
PR and a CI outcome, and prints what the product recorded: per asset status, duration,
backend, tokens and USD; the PR; the ticket comment; and how to open the Dagster UI on the run.
With ``--json`` stdout is one JSON object and nothing else.

``--agent`` picks the coding CLI that does the turns: a real, pinned vendor CLI (``claude``,
``codex``, ``gemini``, ``kimi``, ``grok``, ``glm`` through opencode) as ``.ci/run`` installs
it, or ``sim``, the ``veranda-sim-agent`` stand-in for Claude Code that needs nothing
installed. The default is the first real CLI found, else ``sim``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from veranda_dagster.sim.backends import AGENTS, AgentNotInstalledError, default_agent

DEMO_TIMEOUT_S = 110.0
"""The demo's own budget (the issue asks for under two minutes on two cores)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--agent",
        choices=AGENTS,
        help="the coding CLI that does the turns (default: the first real one installed, "
        "else sim, the stand-in)",
    )
    parser.add_argument(
        "--workdir",
        help="where the sample org, fakes' repos and DAGSTER_HOME go (default: a new temp dir)",
    )


def _say(out: TextIO, text: str) -> None:
    out.write(text + "\n")
    out.flush()


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.sim.driver import SensorDriver, execute_ticket, instance_for, run_tags
    from veranda_dagster.sim.sample_org import SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
    from veranda_dagster.sim.summary import run_summary
    from veranda_dagster.sim.world import LINEAR_LABEL, SimWorld

    log = sys.stderr if args.json else sys.stdout
    root = Path(args.workdir or tempfile.mkdtemp(prefix="veranda-demo-"))
    agent = args.agent or default_agent()
    started = time.monotonic()
    try:
        world = SimWorld(root=root, agent=agent)
    except AgentNotInstalledError as exc:
        _say(sys.stderr, f"demo: {exc}")
        return 2
    with world:
        world.apply_env()
        _say(
            log,
            f"fakes up: linear {world.linear.base_url}, slack {world.slack.base_url}, "
            f"github {world.github.base_url}, model {world.model.base_url}",
        )
        real = f" (the real CLI at {world.agent_path})" if world.agent_path else " (stand-in)"
        _say(log, f"agent: {agent}{real}")
        issue = world.linear.file_ticket(
            SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY, labels=[LINEAR_LABEL]
        )
        _say(log, f"filed {issue['identifier']} in the fake Linear: {issue['title']}")
        with instance_for(str(world.dagster_home)) as instance:
            requests = SensorDriver().tick(instance, "linear_tickets")
            if len(requests) != 1:
                _say(sys.stderr, f"demo: the sensor asked for {len(requests)} runs, expected 1")
                return 1
            key = requests[0].partition_key or ""
            _say(log, f"sensor linear_tickets -> partition {key}, one run; running every asset")
            run_id, ok = execute_ticket(instance, run_tags(requests[0]))
            summary = run_summary(instance, key, world.linear.bot_comments(key))
        world.github.ci.wait_idle(timeout=5)
    elapsed = time.monotonic() - started
    if args.json:
        sys.stdout.write(json.dumps(summary.as_json()) + "\n")
    else:
        _print_summary(summary, run_id, elapsed, root)
    return 0 if ok and summary.ci == "success" else 1


def _print_summary(summary: object, run_id: str, elapsed: float, root: Path) -> None:
    from veranda_dagster.sim.summary import RunSummary

    assert isinstance(summary, RunSummary)
    out = sys.stdout
    _say(out, f"\nrun {run_id} for {summary.ticket} finished in {elapsed:.0f} s\n")
    _say(
        out,
        f"{'asset':<14} {'status':<13} {'outcome':<18} {'secs':>6}  {'backend':<15} "
        f"{'calls':>5} {'tokens in/out':>14} {'USD':>8}",
    )
    for a in summary.assets.values():
        tokens = f"{a.tokens_in}/{a.tokens_out}"
        _say(
            out,
            f"{a.name:<14} {a.status:<13} {a.outcome[:18]:<18} {a.duration_s:>6.1f}  "
            f"{a.backend:<15} {a.model_calls:>5} {tokens:>14} {a.usd:>8.4f}",
        )
    _say(out, f"\nmodel calls: {summary.model_calls_total}, total ${summary.usd_total:.4f}")
    _say(out, f"pull request: {summary.pr_url or '(none)'}   CI: {summary.ci}")
    for comment in summary.comments:
        _say(out, "ticket comment:\n  " + comment.strip().replace("\n", "\n  "))
    home = root / "dagster_home"
    _say(
        out,
        "\ninspect the run's lineage in the Dagster UI:\n"
        f"  DAGSTER_HOME={home} dagster dev -m veranda_dagster.definitions",
    )
