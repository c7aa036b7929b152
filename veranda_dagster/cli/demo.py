"""``veranda demo [--agent NAME] [--tickets SOURCE] [--forge FORGE] [--ci-repair] [--json]``:
the whole pipeline, end to end, with no keys and no network.

Starts the loopback fakes (Linear, Slack, GitHub over real bare repos, a scripted model server
speaking every vendor's wire format), creates the sample organisation, files a ticket in the
fake Linear, lets the real ``linear_tickets`` sensor pick it up against a
temporary ``DAGSTER_HOME`` (embedded SQLite), runs every asset of the ticket's partition to a
PR and a CI outcome, and prints what the product recorded: per asset status, duration,
vendor, tokens and USD; the PR; the ticket comment; and how to open the Dagster UI on the run.
With ``--json`` stdout is one JSON object and nothing else.

``--frontend`` runs the frontend ticket instead: ``acme/storefront``'s cart total stuck on
"Loading…", which the seats look at in headless Chromium through the pinned Playwright MCP
server (real Claude Code drives it; the stand-in has no MCP client), and the run prints each
browser tool call with what the browser answered, and the evidence the PR cites.

``--agent`` picks the coding CLI that does the turns: a real, pinned vendor CLI (``claude``,
``codex``, ``gemini``, ``kimi``, ``grok``, ``glm`` through opencode) as ``.ci/run`` installs
it, or ``sim``, the ``veranda-sim-agent`` stand-in for Claude Code that needs nothing
installed. The default is the first real CLI found, else ``sim``.

``--tickets linear|slack|jira`` picks where the ticket is filed (the fake Linear, a mention in
the fake Slack, or the fake Jira Cloud, each read by its own real sensor) and ``--forge
github|gitlab`` where the code lives (the GitHub fake over local bare repositories, or the
GitLab fake serving the same repositories over git's smart HTTP with a token), in any
combination. ``--ci-repair`` adds a Code Quality job to the forge's CI that the first push
fails, so the run spends its one grounded CI repair; the summary says what it was fed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.sim.choices import FORGES, TICKET_SOURCES
from veranda_dagster.sim.sim_vendors import AGENTS, AgentNotInstalledError, default_agent

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
        "--frontend",
        action="store_true",
        help="run the frontend ticket (acme/storefront: a bug seen in a real browser through "
        "the Playwright MCP server; the real claude CLI looks at the page, the stand-in cannot)",
    )
    parser.add_argument(
        "--tickets",
        choices=TICKET_SOURCES,
        default="linear",
        help="where the ticket is filed (default: linear)",
    )
    parser.add_argument(
        "--forge", choices=FORGES, default="github", help="where the code lives (default: github)"
    )
    parser.add_argument(
        "--ci-repair",
        action="store_true",
        help="the forge's CI also runs a Code Quality job that the first push fails on findings "
        "half of which were already on main, so the run spends its one grounded repair",
    )
    parser.add_argument(
        "--workdir",
        help="where the sample org, fakes' repos and DAGSTER_HOME go (default: a new temp dir)",
    )


def usable_workdir(path: Path) -> None:
    """``--workdir``: a directory this user can write, or one that can be made; else one line."""
    if path.exists() and not path.is_dir():
        raise InputError(f"--workdir {path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--workdir {path}: cannot create ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"--workdir {path}: not writable")


def _say(out: TextIO, text: str) -> None:
    out.write(text + "\n")
    out.flush()


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.cli.preflight import check_demo
    from veranda_dagster.sim.driver import SensorDriver, execute_ticket, instance_for, run_tags
    from veranda_dagster.sim.sample_org import SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
    from veranda_dagster.sim.sample_storefront import (
        STOREFRONT_TICKET_BODY,
        STOREFRONT_TICKET_TITLE,
    )
    from veranda_dagster.sim.summary import run_summary
    from veranda_dagster.sim.world import SimWorld

    agent = args.agent or default_agent()
    check_demo(agent, args.frontend)  # every requirement of this mode, before anything starts
    log = sys.stderr if args.json else sys.stdout
    if args.workdir:
        usable_workdir(Path(args.workdir))
    root = Path(args.workdir or tempfile.mkdtemp(prefix="veranda-demo-"))
    started = time.monotonic()
    try:
        world = SimWorld(
            root=root,
            agent=agent,
            tickets=args.tickets,
            forge=args.forge,
            code_quality=args.ci_repair,
        )
    except AgentNotInstalledError as exc:
        _say(sys.stderr, f"demo: {exc}")
        return 2
    with world:
        world.apply_env()
        source = {"linear": world.linear, "slack": world.slack, "jira": world.jira}
        _say(
            log,
            f"fakes up: tickets {args.tickets} {source[args.tickets].base_url}, "
            f"forge {args.forge} {world.forge_fake.base_url}, model {world.model.base_url}",
        )
        real = (
            f" (the real CLI at {world.agent_path}; the scripted model server answers its turns)"
            if world.agent_path
            else " (a scripted stand-in: it fixes only the sample's tickets, refuses any other)"
        )
        _say(log, f"agent: {agent}{real}")
        title, body = (
            (STOREFRONT_TICKET_TITLE, STOREFRONT_TICKET_BODY)
            if args.frontend
            else (SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)
        )
        filed = world.file_ticket(title, body)
        _say(log, f"filed {filed} in the fake {args.tickets}: {title}")
        with instance_for(str(world.dagster_home)) as instance:
            requests = SensorDriver().tick(instance, world.sensor)
            if len(requests) != 1:
                _say(sys.stderr, f"demo: the sensor asked for {len(requests)} runs, expected 1")
                return 1
            key = requests[0].partition_key or ""
            _say(log, f"sensor {world.sensor} -> partition {key}, one run; running every asset")
            run_id, ok = execute_ticket(instance, run_tags(requests[0]))
            summary = run_summary(instance, key, world.bot_comments(key))
        world.forge_ci.wait_idle(timeout=5)
        browser = browser_calls(world.model.calls) if args.frontend else []
        pulls = world.pull_requests()
        repair = ci_repair(summary)
    elapsed = time.monotonic() - started
    if args.json:
        home = world.dagster_home
        doc = {
            **summary.as_json(),
            "dagster_home": str(home),
            "run_id": run_id,
            "ui_command": ui_command(home),
            "rerun_hint": RERUN_HINT,
            "tickets": args.tickets,
            "forge": args.forge,
            "ci_repair": repair,
            "model_billed_usd": world.model.billed_usd(),
        }
        if args.frontend:
            doc["browser_calls"] = browser
            doc["pr_body"] = pulls[0]["body"] if pulls else ""
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        _print_summary(summary, run_id, elapsed, root, repair)
        if args.frontend:
            _print_browser(browser, pulls[0]["body"] if pulls else "")
    return 0 if ok and summary.ci == "success" else 1


BROWSER_TOOL_PREFIX = "mcp__playwright__"


def browser_calls(calls: list[Any]) -> list[dict[str, str]]:
    """Each browser tool call in the model server's log, with what the browser answered (the
    next request of that seat's turn carries the tool's result back)."""
    out: list[dict[str, str]] = []
    for index, call in enumerate(calls):
        if not (call.tool_call or "").startswith(BROWSER_TOOL_PREFIX):
            continue
        result = next(
            (c for c in calls[index + 1 :] if c.role == call.role and c.step == call.step + 1),
            None,
        )
        out.append(
            {
                "seat": call.role,
                "tool": call.tool_call.removeprefix(BROWSER_TOOL_PREFIX),
                "input": call.tool_input,
                "result": "\n".join(result.tool_results) if result else "",
            }
        )
    return out


def _print_browser(browser: list[dict[str, str]], pr_body: str) -> None:
    out = sys.stdout
    if not browser:
        _say(out, "\nbrowser: no browser tool was called (the stand-in agent has no MCP client)")
        return
    _say(out, f"\nbrowser tool calls (Playwright MCP, headless Chromium): {len(browser)}")
    for call in browser:
        lines = [ln for ln in call["result"].splitlines() if ln.strip()]
        shown = next((ln for ln in lines if "Cart total" in ln or "Error" in ln), "")
        _say(out, f"  {call['seat']:<12} {call['tool']:<26} {call['input'][:60]:<60} {shown[:70]}")
    evidence = pr_body.split("What the browser showed", 1)
    if len(evidence) == 2:
        cited = evidence[1].split("\n\n", 1)[0]
        _say(out, "\nthe pull request cites what the browser showed" + cited.rstrip())


def ci_repair(summary: Any) -> dict[str, Any]:
    """What ``ci_outcome`` recorded of its one repair: how many, grounded in what, and how
    many of the commit's own findings reached the prompt."""
    meta = summary.assets["ci_outcome"].meta
    return {
        "repairs": int(meta.get("repairs", 0) or 0),
        "grounding": str(meta.get("repair_grounding", "none")),
        "violations": int(meta.get("violations", 0) or 0),
    }


def _print_summary(
    summary: object, run_id: str, elapsed: float, root: Path, repair: dict[str, Any]
) -> None:
    from veranda_dagster.sim.summary import RunSummary

    assert isinstance(summary, RunSummary)
    out = sys.stdout
    _say(out, f"\nrun {run_id} for {summary.ticket} finished in {elapsed:.0f} s\n")
    _say(
        out,
        f"{'asset':<14} {'status':<13} {'outcome':<18} {'secs':>6}  {'vendor':<15} "
        f"{'calls':>5} {'tokens in/out':>14} {'USD':>8}",
    )
    for a in summary.assets.values():
        tokens = f"{a.tokens_in}/{a.tokens_out}"
        _say(
            out,
            f"{a.name:<14} {a.status:<13} {a.outcome[:18]:<18} {a.duration_s:>6.1f}  "
            f"{a.vendor:<15} {a.model_calls:>5} {tokens:>14} {a.usd:>8.4f}",
        )
    _say(out, f"\nmodel calls: {summary.model_calls_total}, total ${summary.usd_total:.4f}")
    _say(out, f"pull request: {summary.pr_url or '(none)'}   CI: {summary.ci}")
    if repair["repairs"]:
        _say(
            out,
            f"CI repair: {repair['repairs']}, grounded in {repair['grounding']} "
            f"({repair['violations']} finding(s) of this change)",
        )
    for comment in summary.comments:
        _say(out, "ticket comment:\n  " + comment.strip().replace("\n", "\n  "))
    home = root / "dagster_home"
    _say(out, f"\ninspect the run's lineage in the Dagster UI:\n  {ui_command(home)}")
    _say(out, RERUN_HINT)


def ui_command(home: Path) -> str:
    """Opens the UI on the demo's home; run from the home itself, so the instance is its
    ``dagster.yaml`` and Dagster has no checkout ``dagster.yaml`` to warn about."""
    return f"cd {home} && DAGSTER_HOME={home} dagster dev -m veranda_dagster.definitions"


RERUN_HINT = (
    "the demo's fakes stopped with it, so re-executing or backfilling this run fails; "
    "for reruns, backfills and faults with the fakes kept up, run: veranda dev"
)
