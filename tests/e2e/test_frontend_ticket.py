"""The frontend ticket, whole, as ``veranda demo --frontend`` runs it: real Claude Code, the
real Playwright MCP server, headless Chromium, offline.

``acme/storefront``'s cart total is stuck on "Loading…". Each seat that touches the page starts
the repository's dev server in its own (sandboxed) shell and looks at it through the browser
tools the product hands the real CLI for the turn (``--mcp-config``; nothing is written into the
clone, whose own MCP and settings files are masked); the implementer also checks a stubbed
vendor with an ephemeral Playwright script. The run must end in one PR, CI green, and:

- the model server's log shows the browser tool calls (navigate, snapshot, console) and the
  browser's answers: the "Loading…" snapshot and the ``TypeError`` on the base, "$41.00" after
  the fix, on the URL the dev server printed;
- the red browser test is on the branch, fails on the base (checked here in a clean checkout,
  for the right reason) and passes on the branch (CI ran it);
- the PR body cites what the browser showed, and the stubbed check's result, and nothing the
  tools did not show ("(not seen)");
- neither the ephemeral script nor the browser's output folder reached the branch.

It takes minutes (two cores, a browser per look), so it runs in ``.ci/run``'s slow step.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e import offline
from veranda_dagster.sim.sample_storefront import CART_FIXED_LINE, STOREFRONT
from veranda_dagster.sim.scripted_frontend import NOT_SEEN, RED_TEST
from veranda_dagster.sim.sim_vendors import browser_env
from veranda_dagster.sim.summary import ASSETS

pytestmark = [pytest.mark.slow, pytest.mark.real_cli, pytest.mark.real_cli_slow]
DEMO_TIMEOUT_S = 800.0


def require_browser_tools() -> None:
    env = browser_env()
    missing = [k for k in ("VERANDA_PLAYWRIGHT_MCP", "VERANDA_BROWSER") if k not in env]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI: .ci/run installs @playwright/mcp and chromium ({missing})")
        pytest.skip(f"browser tools not installed here ({missing}); .ci/run installs them")


def git(bare: Path, *args: str, cwd: Path | None = None) -> str:
    argv = ["git", f"--git-dir={bare}", *args] if cwd is None else ["git", *args]
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_demo_frontend_does_the_storefront_ticket_in_a_real_browser(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    offline.require_cli("claude")
    require_browser_tools()
    if offline.ran_offline(request):
        return
    if offline.in_netns():
        offline.assert_offline()
    started = time.monotonic()
    workdir = tmp_path / "demo"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from veranda_dagster.cli import main; sys.exit(main(sys.argv[1:]))",
            "demo",
            "--frontend",
            "--agent",
            "claude",
            "--json",
            "--workdir",
            str(workdir),
        ],
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert_the_frontend_ticket(json.loads(proc.stdout), workdir, tmp_path)
    print(f"frontend ticket (real claude + Playwright MCP + chromium) in {elapsed:.0f} s")


def assert_the_frontend_ticket(doc: dict, workdir: Path, tmp_path: Path) -> None:
    # the whole ticket, one PR, CI green
    assert list(doc["assets"]) == list(ASSETS)
    assert {a["status"] for a in doc["assets"].values()} == {"materialized"}
    assert doc["assets"]["red_tests"]["outcome"] == "red"
    assert doc["ci"] == "success" and doc["pr_url"].endswith(f"/{STOREFRONT}/pull/1")

    # the model server's log: the browser tool calls and what the browser answered
    calls = doc["browser_calls"]
    by_seat = {
        seat: [c for c in calls if c["seat"] == seat] for seat in ("test_writer", "implementer")
    }
    assert [c["tool"] for c in by_seat["test_writer"]] == [
        "browser_navigate",
        "browser_snapshot",
        "browser_console_messages",
    ]
    assert [c["tool"] for c in by_seat["implementer"]] == [
        "browser_navigate",
        "browser_snapshot",
        "browser_console_messages",
    ] * 2
    for seat, seen in by_seat.items():
        url = json.loads(seen[0]["input"])["url"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/"), (seat, url)
        assert f"Page URL: {url}" in seen[0]["result"], (seat, seen[0])
        assert 'status "Cart total"' in seen[1]["result"] and "Loading…" in seen[1]["result"]
        assert "TypeError: Cannot set properties of null" in seen[2]["result"], (seat, seen[2])
    after = by_seat["implementer"][3:]
    assert 'status "Cart total" [ref=' in after[1]["result"] and "$41.00" in after[1]["result"]
    assert "Total messages: 0" in after[2]["result"]

    # the PR cites what the browser showed, and only that
    body = doc["pr_body"]
    assert "before: console `TypeError: Cannot set properties of null (setting 'textContent')`" in (
        body
    )
    assert '`status "Cart total": Loading…`' in body
    assert '`status "Cart total": $41.00`' in body
    assert "`stubbed /api/cart (2 x Seat licence): total $24.00`" in body
    assert NOT_SEEN not in body
    assert "`public/cart.js:21` ✓" in body

    # the branch: the red browser test and the fix; no ephemeral script, no browser output
    bare = workdir / "org" / "git" / f"{STOREFRONT}.git"
    branch = next(
        ref.split("refs/heads/", 1)[1]
        for ref in git(bare, "for-each-ref", "--format=%(refname)", "refs/heads").split()
        if ref != "refs/heads/main"
    )
    assert git(bare, "show", f"{branch}:tests/test_cart_total.py") == RED_TEST
    assert CART_FIXED_LINE in git(bare, "show", f"{branch}:public/cart.js")
    tree = git(bare, "ls-tree", "-r", "--name-only", branch).split()
    assert not [p for p in tree if p.startswith(".playwright-mcp") or p.endswith(".mcp.json")]
    assert "VERANDA_STUB" not in git(bare, "log", "-p", f"main..{branch}")

    # the red test fails on the base for the right reason (CI ran it green on the branch)
    base = tmp_path / "base"
    git(bare, "clone", "--quiet", str(bare), str(base), cwd=tmp_path)
    (base / "tests" / "test_cart_total.py").write_text(RED_TEST)
    red = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_cart_total.py",
        ],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert red.returncode == 1 and "Actual value: Loading…" in red.stdout, red.stdout[-3000:]
    shutil.rmtree(base)
