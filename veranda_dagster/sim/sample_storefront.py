"""``acme/storefront``: the sample organisation's frontend, with a bug you can see in a browser.

A plain HTML/JS cart page and its backend, served by a tiny Node dev server (``npm run dev``,
``server.js``: the static ``public/`` folder plus ``GET /api/cart``), with browser tests in
Python Playwright that drive the installed Chromium against that server on loopback. The bug
is visual: ``cart.js`` writes the total into an element id the page does not have, so the
total stays "Loading…" forever and the console says ``TypeError: Cannot set properties of null
(setting 'textContent')``. The shipped browser test only checks the lines, so it passes on the
buggy page. ``STOREFRONT_TICKET`` describes what a user sees, not the cause.
"""

from __future__ import annotations

import json

from veranda_dagster.sim.sample_setup import python_tools_setup

STOREFRONT = "acme/storefront"

PACKAGE_JSON = (
    json.dumps(
        {
            "name": "acme-storefront",
            "version": "0.1.0",
            "private": True,
            "description": "Acme's cart page: plain HTML and JavaScript, no build step",
            "scripts": {
                "dev": "node server.js",
                "start": "node server.js",
                "test": "python3 -m pytest -q -p no:cacheprovider tests",
            },
        },
        indent=2,
    )
    + "\n"
)

SERVER_JS = """\
// The storefront's dev server: the static page in public/ and its backend, GET /api/cart.
// PORT=0 picks a free port; the URL is printed once the server listens. It exits on its own
// after IDLE_EXIT_MS without a request, so a forgotten one never outlives its session.
const http = require("node:http");
const fs = require("node:fs");
const path = require("node:path");

const PUBLIC = path.join(__dirname, "public");
const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};
const CART = {
  lines: [
    { sku: "seat", name: "Seat licence", unit_price_cents: 1200, quantity: 3 },
    { sku: "support", name: "Priority support", unit_price_cents: 500, quantity: 1 },
  ],
};
const IDLE_EXIT_MS = Number(process.env.IDLE_EXIT_MS || 300000);

function send(res, status, type, body) {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
  res.end(body);
}

let idle;
function touch() {
  clearTimeout(idle);
  idle = setTimeout(() => process.exit(0), IDLE_EXIT_MS);
}

const server = http.createServer((req, res) => {
  touch();
  const url = new URL(req.url, "http://localhost");
  if (url.pathname === "/api/cart") {
    return send(res, 200, "application/json", JSON.stringify(CART));
  }
  const rel = url.pathname === "/" ? "index.html" : url.pathname.slice(1);
  const file = path.join(PUBLIC, path.normalize(rel));
  if (!file.startsWith(PUBLIC + path.sep)) return send(res, 403, "text/plain", "forbidden");
  fs.readFile(file, (err, data) => {
    if (err) return send(res, 404, "text/plain", "not found");
    send(res, 200, TYPES[path.extname(file)] || "application/octet-stream", data);
  });
});

server.listen(Number(process.env.PORT || 5173), process.env.HOST || "127.0.0.1", () => {
  touch();
  const { address, port } = server.address();
  console.log(`storefront dev server on http://${address}:${port}/`);
});
"""

INDEX_HTML = """\
<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Acme storefront: your cart</title>
    <link rel="icon" href="data:,">
  </head>
  <body>
    <main>
      <h1>Your cart</h1>
      <ul id="lines" aria-label="Cart lines"></ul>
      <p>Total: <output id="cart-total" aria-label="Cart total">Loading…</output></p>
    </main>
    <script src="/cart.js"></script>
  </body>
</html>
"""

CART_BUGGY_LINE = '  document.getElementById("total").textContent = formatCents(total);\n'
CART_FIXED_LINE = '  document.getElementById("cart-total").textContent = formatCents(total);\n'

CART_JS = (
    """\
// The cart page: its lines and total, from the vendor (/api/cart), in integer cents.

function formatCents(cents) {
  return `$${(cents / 100).toFixed(2)}`;
}

function lineTotal(line) {
  return line.unit_price_cents * line.quantity;
}

async function renderCart() {
  const response = await fetch("/api/cart");
  const cart = await response.json();
  const list = document.getElementById("lines");
  for (const line of cart.lines) {
    const item = document.createElement("li");
    item.textContent = `${line.quantity} x ${line.name}: ${formatCents(lineTotal(line))}`;
    list.append(item);
  }
  const total = cart.lines.reduce((sum, line) => sum + lineTotal(line), 0);
"""
    + CART_BUGGY_LINE
    + """}

renderCart();
"""
)

CONFTEST_PY = '''\
"""Browser fixtures: the dev server on a free loopback port, and a page in headless Chromium.

The browser is the installed one (``VERANDA_BROWSER``, else ``chromium`` on PATH): Playwright
never downloads one here.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture()
def dev_server():
    proc = subprocess.Popen(
        ["node", "server.js"],
        cwd=ROOT,
        env={**os.environ, "PORT": "0", "IDLE_EXIT_MS": "60000"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "http://" in line, f"the dev server did not start: {line!r}"
        yield line.split("on ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture()
def browser_page():
    browser_path = os.environ.get("VERANDA_BROWSER") or shutil.which("chromium")
    assert browser_path, "no installed Chromium (set VERANDA_BROWSER)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(3000)
            yield page
        finally:
            browser.close()
'''

TEST_CART_PAGE_PY = """\
from playwright.sync_api import expect


def test_the_cart_lists_each_line_with_its_quantity(browser_page, dev_server):
    browser_page.goto(dev_server)
    lines = browser_page.get_by_role("list", name="Cart lines").get_by_role("listitem")
    expect(lines).to_have_text(["3 x Seat licence: $36.00", "1 x Priority support: $5.00"])
"""

PYTEST_INI = """\
[pytest]
# plugins installed next to pytest in this environment that the repo does not use
addopts = -p no:hypothesispytest -p no:benchmark -p no:anyio
"""

MAKEFILE = """\
PYTHON ?= python3

.PHONY: test lint dev

test:
\t@$(PYTHON) -m pytest -q -p no:cacheprovider tests

lint:
\t@node --check server.js && node --check public/cart.js

dev:
\t@node server.js
"""

README = """\
# acme/storefront

Acme's cart page. `npm run dev` serves it on http://127.0.0.1:5173/ (`PORT=0` picks a free
port), with its vendor at `/api/cart`. `make test` runs the browser tests (Python Playwright,
headless Chromium); `make lint` checks the JavaScript parses.
"""

STOREFRONT_HINTS = """\
# acme/storefront hints

- `npm run dev` starts the dev server; it prints its URL. `make test` runs the browser tests.
- The page is plain JavaScript in `public/`; there is no build step.
"""

STOREFRONT_TICKET_TITLE = "Cart page total is stuck on Loading…"
STOREFRONT_TICKET_BODY = """\
Repo: acme/storefront

On the cart page the line items show up (3 x Seat licence: $36.00, 1 x Priority support: $5.00) \
but the total never appears: it says "Total: Loading…" forever. Expected: the sum of the lines, \
$41.00. Seen in Chromium.
"""


STOREFRONT_SETUP = python_tools_setup({"pytest": "pytest", "playwright": "playwright"})
"""Python Playwright drives the browser the image brings (``WITH_BROWSER=1``); it downloads
no browser of its own."""


def storefront_files() -> dict[str, str]:
    return {
        "README.md": README,
        "package.json": PACKAGE_JSON,
        "server.js": SERVER_JS,
        "public/index.html": INDEX_HTML,
        "public/cart.js": CART_JS,
        "Makefile": MAKEFILE,
        "pytest.ini": PYTEST_INI,
        ".veranda/setup.sh": STOREFRONT_SETUP,
        ".gitignore": "__pycache__/\n.pytest_cache/\nnode_modules/\n",
        "tests/conftest.py": CONFTEST_PY,
        "tests/test_cart_page.py": TEST_CART_PAGE_PY,
    }
