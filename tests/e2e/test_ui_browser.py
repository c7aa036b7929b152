"""A newcomer's first look, in a real browser: ``veranda dev``, then the Dagster UI.

Starts ``veranda dev`` as a person would (the CLI, as its own process), waits for the sample
ticket's sensor-launched run to finish, then drives Debian's headless Chromium with Playwright:
the lineage shows all nine phases, the ticket's partition is listed, the ``patch``
materialization shows vendor, tokens and USD; the PR and ticket links open pages with their
titles (served by the fakes, offline); the runs list shows the ticket's title; the global
lineage opens as the whole chain. Screenshots go to ``tests/artifacts/ui/`` and the lineage to
``tests/artifacts/lineage.png``. Ctrl-C (SIGINT) then stops everything it started.
Skips only when no Chromium is installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.dagster_ui import wait_for
from veranda_dagster.assets import PHASE_ASSETS
from veranda_dagster.sim.dagster_dev import free_port
from veranda_dagster.sim.sample_org import SAMPLE_TICKET_TITLE

pytestmark = pytest.mark.dagster_ui

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "tests" / "artifacts" / "ui"
LINEAGE_SHOT = ROOT / "tests" / "artifacts" / "lineage.png"
"""The global lineage as a newcomer first sees it (Assets > Lineage)."""
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PHASES = [a.key.path[-1] for a in PHASE_ASSETS]
RUNS = "{ runsOrError { ... on Runs { results { runId status tags { key value } } } } }"
RUN_TIMEOUT_S = 900.0
PAGE_TIMEOUT_MS = 120_000


def graphql(ui: str, query: str) -> dict:
    response = httpx.post(f"{ui}/graphql", json={"query": query}, timeout=30)
    response.raise_for_status()
    return response.json()["data"]


def finished_sample_run(ui: str) -> dict | None:
    try:
        runs = graphql(ui, RUNS)["runsOrError"]["results"]
    except (httpx.HTTPError, KeyError, TypeError, ValueError):
        return None
    done = [r for r in runs if r["status"] in ("SUCCESS", "FAILURE", "CANCELED")]
    return done[0] if done else None


@pytest.fixture
def veranda_dev(tmp_path: Path):
    port = free_port()
    state = tmp_path / "dev.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from veranda_dagster.cli import main; sys.exit(main(sys.argv[1:]))",
            "dev",
            "--agent",
            "sim",
            "--port",
            str(port),
            "--workdir",
            str(tmp_path / "dev"),
            "--state",
            str(state),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        yield f"http://127.0.0.1:{port}", state, proc, tmp_path / "dev"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGINT)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)


def test_lineage_partition_cost_and_pr_link_in_a_real_browser(veranda_dev) -> None:
    if not CHROMIUM.exists():
        pytest.skip("no Chromium at /usr/bin/chromium (.ci/run installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    ui, state, proc, workdir = veranda_dev
    started = time.monotonic()
    wait_for("veranda dev's state file", lambda: state.exists() or proc.poll() is not None, 300)
    assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
    assert json.loads(state.read_text())["ui_url"] == ui
    run = wait_for("the sample ticket's run", lambda: finished_sample_run(ui), RUN_TIMEOUT_S, 5)
    tags = {t["key"]: t["value"] for t in run["tags"]}
    assert run["status"] == "SUCCESS", run
    assert tags["dagster/sensor_name"] == "linear_tickets"  # launched by the sensor, the daemon
    key = tags["dagster/partition"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            # the UI's one-time "Join the Dagster community" dialog covers the page: skip it
            skip = page.get_by_role("button", name="Skip")
            page.add_locator_handler(skip, lambda: skip.click())

            # the lineage, every phase (patch's lineage at full depth: groups drawn open)
            page.goto(f"{ui}/assets/patch?view=lineage&lineageScope=neighbors&lineageDepth=10")
            for name in PHASES:
                page.get_by_text(name, exact=True).last.wait_for(state="visible")
            page.screenshot(path=str(ARTIFACTS / "lineage.png"))

            # the ticket's partition is listed
            page.goto(f"{ui}/assets/patch?view=partitions")
            page.get_by_text(key, exact=True).first.wait_for(state="visible")
            assert page.get_by_text("Materialized (1)").count() == 1
            page.screenshot(path=str(ARTIFACTS / "partitions.png"))

            # the patch materialization: vendor, tokens and USD
            page.goto(f"{ui}/assets/patch?view=events&partition={key}")
            for label in ("backend", "tokens_in", "tokens_out", "usd", "duration_s"):
                page.get_by_text(label, exact=True).first.wait_for(state="visible")
            page.get_by_text("claude/api_key", exact=True).first.wait_for(state="visible")
            page.screenshot(path=str(ARTIFACTS / "patch_materialization.png"))

            # the PR link is a link, and clicking it opens the pull request
            page.goto(f"{ui}/assets/pull_request?view=events&partition={key}")
            link = page.locator("a[href*='/pull/']").first
            link.wait_for(state="visible")
            href = link.get_attribute("href") or ""
            assert href.endswith("/acme/billing/pull/1"), href
            page.screenshot(path=str(ARTIFACTS / "pull_request.png"))
            with page.context.expect_page() as opened:
                link.click()
            opened.value.wait_for_load_state()
            assert opened.value.url == href
            # the fake serves the pull request's page: its title, the ticket's words in it
            assert "Pull request acme/billing#1" in opened.value.title()
            opened.value.get_by_role("heading", level=1).wait_for(state="visible")
            assert SAMPLE_TICKET_TITLE in opened.value.content()
            opened.value.screenshot(path=str(ARTIFACTS / "pull_request_page.png"))
            opened.value.close()

            # the ticket link opens the ticket in the fake Linear (not linear.app, offline)
            page.goto(f"{ui}/assets/ticket?view=events&partition={key}")
            ticket_link = page.locator("a[href*='/acme/issue/']").first
            ticket_link.wait_for(state="visible")
            assert (ticket_link.get_attribute("href") or "").startswith("http://127.0.0.1:")
            with page.context.expect_page() as opened_ticket:
                ticket_link.click()
            opened_ticket.value.wait_for_load_state()
            assert opened_ticket.value.title() == f"{SAMPLE_TICKET_TITLE} · Issue {key}"
            opened_ticket.value.get_by_text("Opened a pull request", exact=False).first.wait_for(
                state="visible"
            )
            opened_ticket.value.screenshot(path=str(ARTIFACTS / "ticket_page.png"))
            opened_ticket.value.close()

            # the runs list says what each run is about: the ticket's title, not just its key
            page.goto(f"{ui}/runs")
            page.get_by_text(SAMPLE_TICKET_TITLE, exact=False).first.wait_for(state="visible")
            page.screenshot(path=str(ARTIFACTS / "runs.png"))

            # the global lineage opens as the chain: one group, so no collapsed group boxes
            page.goto(f"{ui}/asset-groups")
            for name in PHASES:
                page.get_by_text(name, exact=True).last.wait_for(state="visible")
            page.screenshot(path=str(LINEAGE_SHOT))
        finally:
            browser.close()
    print(f"browser test: {time.monotonic() - started:.0f} s after veranda dev started")

    # Ctrl-C: everything veranda dev started stops, and it said so
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out[-3000:]
    assert "Dagster UI: " + ui in out and 'veranda sim ticket "' in out
    assert "Instance:              the shipped dagster.yaml (10 runs" in out
    assert "Daemon and run logs:   " in out and "dagster-dev.log" in out
    assert "a scripted stand-in" in out and "veranda sim notes" in out
    assert "stopping dagster dev" in out
    log = (workdir / "world" / "dagster_home" / "dagster-dev.log").read_text(errors="replace")
    assert "will not be used" not in log
