"""The frontend sample, ``acme/storefront``: detected as a frontend with a dev server, told the
browser's stubbing boundary, and its bug visible to a real browser test.

The red test the scripted test writer writes fails on the base for the right reason (the
product's own ``judge``: an assertion, "Loading…" where "$41.00" belongs) and passes once the
implementer's one-line fix is applied; the shipped test passes on both. Chromium runs
headless from the installed binary; nothing is downloaded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.context.layers import build_layers
from veranda_dagster.domain.context.retrieval import RetrievalResult
from veranda_dagster.domain.core.models import CommandResult, Ticket
from veranda_dagster.domain.work.red_tests import judge
from veranda_dagster.sim.sample_org import create_sample_org
from veranda_dagster.sim.sample_storefront import (
    CART_BUGGY_LINE,
    CART_FIXED_LINE,
    STOREFRONT,
    STOREFRONT_TICKET_BODY,
    STOREFRONT_TICKET_TITLE,
)
from veranda_dagster.sim.scripted_frontend import RED_TEST, fill
from veranda_dagster.sim.scripted_seats import script_reply

TICKET = Ticket(
    id="ENG-7", source="linear", title=STOREFRONT_TICKET_TITLE, description=STOREFRONT_TICKET_BODY
)


@pytest.fixture()
def clone(tmp_path: Path) -> Path:
    org = create_sample_org(tmp_path / "org")
    target = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", str(org.bare(STOREFRONT)), str(target)],
        check=True,
        capture_output=True,
    )
    return target


def require_browser() -> None:
    if shutil.which("chromium") or os.environ.get("VERANDA_BROWSER"):
        return
    if os.environ.get("CI"):
        pytest.fail("CI: .ci/run installs chromium")
    pytest.skip("no chromium here; .ci/run installs it")


def make_test(clone: Path, *files: str) -> CommandResult:
    argv = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *files]
    proc = subprocess.run(argv, cwd=clone, capture_output=True, text=True, timeout=180)
    return CommandResult(
        command=" ".join(argv),
        exit_code=proc.returncode,
        output_tail=(proc.stdout + proc.stderr)[-6000:],
        duration_s=0.0,
    )


def test_the_storefront_is_a_frontend_whose_instructions_name_the_stubbing_boundary(clone):
    facts = read_repo_facts(clone)
    assert facts.frontend is True
    assert facts.dev_server == "npm run dev"
    assert facts.test == ["make test"] and facts.lint == ["make lint"]
    layers = build_layers(
        TICKET,
        clone,
        facts,
        runbooks_dir=None,
        hints_dir=None,
        pack=RetrievalResult(),
        repo=STOREFRONT,
    )
    text = " ".join(next(x for x in layers if x.name == "repo_facts").text.split())
    assert "request and websocket stubbing" in text and "NOT available" in text
    assert "write an ephemeral Playwright script" in text
    assert "Dev server: `npm run dev`" in text


def test_the_red_browser_test_fails_on_base_for_the_right_reason_and_passes_on_the_fix(clone):
    require_browser()
    shipped = make_test(clone, "tests")
    assert shipped.exit_code == 0, shipped.output_tail

    (clone / "tests" / "test_cart_total.py").write_text(RED_TEST)
    base = make_test(clone, "tests/test_cart_total.py")
    assert base.exit_code == 1, base.output_tail
    assert judge(base, TICKET, pytest=True) is None, base.output_tail
    assert "expected to have text '$41.00'" in base.output_tail
    assert "Actual value: Loading…" in base.output_tail

    cart = clone / "public" / "cart.js"
    cart.write_text(cart.read_text().replace(CART_BUGGY_LINE, CART_FIXED_LINE))
    fixed = make_test(clone, "tests")
    assert fixed.exit_code == 0, fixed.output_tail
    assert "2 passed" in fixed.output_tail


def test_the_implementer_cites_only_what_its_tools_returned():
    """Its PR text is filled from the browser's replies of its own turn; nothing seen, nothing
    claimed."""
    prompt = (
        f"Role: implementer\nTicket ENG-7: {STOREFRONT_TICKET_TITLE}\n\n{STOREFRONT_TICKET_BODY}"
    )
    reply = script_reply("implementer", prompt, 1)
    seen = [
        "> node server.js\n\nstorefront dev server on http://127.0.0.1:40123/\n",
        '### Snapshot\n```yaml\n  - status "Cart total" [ref=e8]: Loading…\n```',
        "Total messages: 1 (Errors: 1, Warnings: 0)\n\nTypeError: Cannot set properties of null "
        "(setting 'textContent')\n    at renderCart (http://127.0.0.1:40123/cart.js:21:48)",
        '### Snapshot\n```yaml\n  - status "Cart total" [ref=e8]: $41.00\n```',
        "Total messages: 0 (Errors: 0, Warnings: 0)",
        "stubbed /api/cart (2 x Seat licence): total $24.00",
    ]
    text = fill(reply.text, seen)
    assert "http://127.0.0.1:40123/" in text
    assert "console `TypeError: Cannot set properties of null (setting 'textContent')`" in text
    assert "before: console" in text and '`status "Cart total": Loading…`' in text
    assert '`status "Cart total": $41.00`' in text
    assert "`Total messages: 0 (Errors: 0, Warnings: 0)`" in text
    assert "total $24.00" in text
    assert "(not seen)" in fill(reply.text, seen[:1]) and "{{" not in text
