"""The scripted seats for the frontend ticket (``acme/storefront``): they look in a real browser.

Each seat that touches the page does what a careful frontend engineer does, through the real
CLI's own tools: it starts the repository's dev server (``npm run dev``, the command the facts
reader found) in its shell, opens the URL the server printed with the Playwright MCP browser,
reads the accessibility snapshot and the console, and only then writes. The implementer looks
again after its edit, and checks a stubbed vendor with an ephemeral Playwright script run from
its shell (the MCP browser cannot stub requests), which is never written into the repository.

What the seats *say* is filled from what the tools returned (``{{name}}`` placeholders,
``fill``): the dev server's URL from its own output, the total and the console error from the
browser's replies. So the pull request cites what the browser really showed on this run; if a
tool never showed it, the text says ``(not seen)`` rather than inventing it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from veranda_dagster.sim.sample_storefront import (
    CART_BUGGY_LINE,
    CART_FIXED_LINE,
    STOREFRONT,
)
from veranda_dagster.sim.scripted_agent import (
    BrowserCall,
    EditFile,
    LoadBrowserTools,
    RunCommand,
    ScriptedReply,
    WriteFile,
    confirm_repo,
    review,
    then_test,
)

CART_JS = "public/cart.js"
TEST_COMMAND = "make test"
BROWSER_TOOLS = ("browser_navigate", "browser_snapshot", "browser_console_messages")

DEV_START = (
    'log="$(mktemp)"; (PORT=0 IDLE_EXIT_MS=120000 npm run dev > "$log" 2>&1 &); '
    "for i in $(seq 100); do grep -q 'http://' \"$log\" && break; sleep 0.1; done; "
    'cat "$log"'
)
"""The repository's dev server in the background (it prints its URL; ``PORT=0`` = any free
port), started the way a person starts one from a shell. The CLI's sandbox ends it with the
turn; the server's own idle exit is the backstop where no sandbox runs."""

RED_TEST = """\
from playwright.sync_api import expect


def test_the_total_shows_the_sum_of_the_lines(browser_page, dev_server):
    errors = []
    browser_page.on("pageerror", lambda error: errors.append(str(error)))
    browser_page.goto(dev_server)
    total = browser_page.get_by_role("status", name="Cart total")
    expect(total).to_have_text("$41.00", timeout=3000)
    assert errors == []
"""

EDGE_TESTS = """\
from playwright.sync_api import expect


def test_an_empty_cart_totals_zero(browser_page, dev_server):
    browser_page.route("**/api/cart", lambda route: route.fulfill(json={"lines": []}))
    browser_page.goto(dev_server)
    total = browser_page.get_by_role("status", name="Cart total")
    expect(total).to_have_text("$0.00", timeout=3000)
"""

STUB_CHECK = """\
python3 - <<'VERANDA_STUB'
# Ephemeral Playwright check, never written to the repository: the vendor stubbed with
# page.route, which the MCP browser cannot do.
import os, shutil
from playwright.sync_api import sync_playwright
cart = {"lines": [{"sku": "seat", "name": "Seat licence", "unit_price_cents": 1200, "quantity": 2}]}
browser_path = os.environ.get("VERANDA_BROWSER") or shutil.which("chromium")
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
    page = browser.new_page()
    page.route("**/api/cart", lambda route: route.fulfill(json=cart))
    page.goto("{{dev_url}}")
    total = page.get_by_role("status", name="Cart total")
    total.filter(has_text="$").wait_for(timeout=3000)
    print("stubbed /api/cart (2 x Seat licence): total", total.inner_text())
    browser.close()
VERANDA_STUB"""

OLD_COMMENT = (
    "// The cart page: its lines and total, from the vendor (/api/cart), in integer cents.\n"
)
NEW_COMMENT = (
    "// The cart page: its lines and total, from the vendor (/api/cart), in integer cents.\n"
    '// The total goes into <output id="cart-total">; index.html and this file must agree.\n'
)
REVIEW_FINDING = {
    "path": CART_JS,
    "line": 21,
    "message": "Say at the top of cart.js which element the total is written into.",
}

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_TOTAL = re.compile(r'status "Cart total"[^\n:]*: ([^\n]+)')
_OBSERVATIONS: dict[str, Callable[[list[str]], str | None]] = {
    "dev_url": lambda seen: _first(r"dev server on (http://127\.0\.0\.1:\d+/)", seen),
    "total_first": lambda seen: _nth(_TOTAL, seen, 0),
    "total_last": lambda seen: _nth(_TOTAL, seen, -1),
    "console_error": lambda seen: _first(r"(?m)^((?:Uncaught )?\w*Error: [^\n]+)", seen),
    "console_last": lambda seen: _nth(re.compile(r"(?m)^(Total messages: [^\n]+)"), seen, -1),
    "stub_result": lambda seen: _first(r"(stubbed /api/cart[^\n]+)", seen),
}
"""What a seat can cite, each read off the tools' results of its own turn so far."""
NOT_SEEN = "(not seen)"


def _first(pattern: str, seen: list[str]) -> str | None:
    return _nth(re.compile(pattern), seen, 0)


def _nth(pattern: re.Pattern[str], seen: list[str], index: int) -> str | None:
    found = [m.group(1).strip() for text in seen for m in pattern.finditer(text)]
    return found[index] if found else None


def fill(text: str, seen: list[str]) -> str:
    """``text`` with each ``{{name}}`` replaced by what the tools showed (``NOT_SEEN`` if not)."""

    def one(match: re.Match[str]) -> str:
        observe = _OBSERVATIONS.get(match.group(1))
        return (observe(seen) if observe else None) or NOT_SEEN

    return _PLACEHOLDER.sub(one, text)


def is_storefront(prompt: str) -> bool:
    """The ticket is about the frontend sample (its repository is named in every seat's
    ticket block, or as the repo confirmer's current guess)."""
    return STOREFRONT in prompt


def _look() -> list[BrowserCall]:
    return [
        BrowserCall("browser_navigate", {"url": "{{dev_url}}"}),
        BrowserCall("browser_snapshot", {}),
        BrowserCall("browser_console_messages", {"level": "error"}),
    ]


def storefront_reply(role: str, prompt: str, round_no: int) -> ScriptedReply | None:
    """The seat's reply for the storefront ticket, or None where the generic one serves."""
    if role == "repo_confirmer":
        return confirm_repo(prompt, needs_visual_verification=True)
    if role == "test_writer":
        return then_test(
            "Added tests/test_cart_total.py: the cart total must read $41.00 and the page must "
            "raise no error. In the browser (Playwright MCP, headless Chromium, {{dev_url}}) the "
            'accessibility snapshot showed `status "Cart total": {{total_first}}` and the '
            "console `{{console_error}}`.",
            LoadBrowserTools(BROWSER_TOOLS),
            RunCommand(DEV_START),
            *_look(),
            WriteFile("tests/test_cart_total.py", RED_TEST),
            command=TEST_COMMAND,
        )
    if role == "implementer":
        return then_test(
            f"`renderCart` wrote the total into `#total`, an id the page does not have "
            f'(`<output id="cart-total">`), so it threw and the total stayed on Loading… '
            f"({CART_JS}:21). It now writes into `#cart-total`.\n\n"
            "What the browser showed (Playwright MCP, headless Chromium, the dev server at "
            "{{dev_url}}):\n"
            "- before: console `{{console_error}}`; snapshot "
            '`status "Cart total": {{total_first}}`\n'
            '- after: snapshot `status "Cart total": {{total_last}}`; console '
            "`{{console_last}}`\n"
            "- vendor stubbed by an ephemeral Playwright script (`page.route`, not committed; "
            "the MCP browser cannot stub requests): `{{stub_result}}`",
            LoadBrowserTools(BROWSER_TOOLS),
            RunCommand(DEV_START),
            *_look(),
            EditFile(CART_JS, CART_BUGGY_LINE, CART_FIXED_LINE),
            *_look(),
            RunCommand(STUB_CHECK),
            command=TEST_COMMAND,
        )
    if role == "second_test_writer":
        return then_test(
            "Added tests/test_cart_total_edges.py: an empty cart (the vendor stubbed with "
            "page.route in the test) totals $0.00.",
            WriteFile("tests/test_cart_total_edges.py", EDGE_TESTS),
            command=TEST_COMMAND,
        )
    if role == "reviewer":
        return review(REVIEW_FINDING, round_no)
    if role == "review_fixer":
        return then_test(
            "Said at the top of cart.js where the total goes.",
            EditFile(CART_JS, OLD_COMMENT, NEW_COMMENT),
            command=TEST_COMMAND,
        )
    return None
