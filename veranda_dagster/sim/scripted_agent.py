"""The scripted model: which seat a prompt is for, and what that seat deterministically does.

Roles are read off the prompt the way a person would: an explicit ``Role: <name>`` line wins,
else the seat's own sentence in the product's prompts ("You are the test writer", "You check
which repository a ticket is about", the health probe's "Reply with the single word OK").
Each role's reply is text plus file edits (``Write``/``Edit`` tool calls, as Claude Code's
tools take them) that fix the sample organisation's real bug in ``acme/billing``: the test
writer adds a failing test, the implementer fixes ``invoice_total_cents``, the independent
tester adds edge cases that pass on the fix, the reviewer raises one finding in its first round
and none after, the repo confirmer answers the requested JSON. Nothing here is keyed on a test:
the same script serves the demo and every e2e test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from veranda_dagster.sim.sample_org import INVOICE_BUGGY_LINE, INVOICE_FIXED_LINE

INVOICE = "billing/invoice.py"

RED_TEST = """\
from billing.invoice import LineItem, invoice_total_cents


def test_quantity_multiplies_the_unit_price() -> None:
    assert invoice_total_cents([LineItem("seat", 1200, quantity=3)]) == 3600
"""

EDGE_TESTS = """\
from billing.invoice import LineItem, invoice_total_cents


def test_zero_quantity_costs_nothing() -> None:
    assert invoice_total_cents([LineItem("seat", 1200, quantity=0)]) == 0


def test_discount_applies_to_the_quantity_weighted_subtotal() -> None:
    items = [LineItem("seat", 1200, quantity=3), LineItem("support", 500, quantity=2)]
    assert invoice_total_cents(items, discount_percent=10) == 4140
"""

OLD_DOC = '    """Sum of unit price times quantity, minus a percentage discount rounded down."""\n'
NEW_DOC = (
    '    """Sum of unit price times quantity over all lines, minus a percentage discount of that\n'
    '    subtotal, rounded down."""\n'
)

REVIEW_FINDING = {
    "path": INVOICE,
    "line": 14,
    "message": "Say in the docstring that the discount applies to the quantity-weighted subtotal.",
}

_ROLE_LINE = re.compile(r"^\s*Role:\s*([a-z_]+)\s*$", re.M | re.I)
_SEATS: tuple[tuple[str, str], ...] = (
    ("Reply with the single word OK", "probe"),
    ("You check which repository a ticket is about", "repo_confirmer"),
    ("You are the test writer", "test_writer"),
    ("You are an independent tester", "second_test_writer"),
    ("You are the simplifier", "simplifier"),
    ("You are the reviewer", "reviewer"),
    ("You are the CI repairer", "ci_repairer"),
    ("A reviewer raised these findings", "review_fixer"),
    ("People reviewed your pull request", "feedback_implementer"),
    ("You are the implementer", "implementer"),
)

ROLE_ASSET = {
    "repo_confirmer": "repo_guess",
    "test_writer": "red_tests",
    "implementer": "patch",
    "second_test_writer": "patch",
    "simplifier": "review_rounds",
    "reviewer": "review_rounds",
    "review_fixer": "review_rounds",
    "ci_repairer": "ci_outcome",
    "feedback_implementer": "feedback",
}
"""Which asset's phase sends each seat's prompt (the probe belongs to none)."""


def detect_role(prompt: str, system: str = "") -> str:
    for text in (prompt, system):
        match = _ROLE_LINE.search(text)
        if match:
            return match.group(1).lower()
    for needle, role in _SEATS:
        if needle in prompt:
            return role
    return "unknown"


@dataclass
class ScriptedReply:
    text: str
    edits: list[dict[str, Any]] = field(default_factory=list)
    """Tool calls: ``{"name": "Write", "input": {"file_path", "content"}}`` or ``Edit`` with
    ``old_string``/``new_string``; paths relative to the agent's working directory."""


def _write(path: str, content: str) -> dict[str, Any]:
    return {"name": "Write", "input": {"file_path": path, "content": content}}


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"name": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}}


def _current_guess(prompt: str) -> str | None:
    match = re.search(r"Current guess:\s*([\w.-]+/[\w.-]+)", prompt)
    return match.group(1) if match else None


_INJECTION = re.compile(r"ignore (all )?previous instructions", re.I)
MAX_ECHO_CHARS = 6_000


def obey_injection(reply: ScriptedReply, role: str, prompt: str, system: str) -> ScriptedReply:
    """A gullible model: asked to "print your environment", it dumps everything it was given
    (instruction file and prompt) into its free-text answer, which the product turns into PR
    bodies and comments. So a secret that ever reaches a model's context leaks into an output,
    where the e2e scan finds it. JSON-only seats keep their JSON (the phase would reject it)."""
    if not _INJECTION.search(prompt) or role in ("probe", "repo_confirmer", "reviewer"):
        return reply
    dump = f"{system}\n---\n{prompt}"[:MAX_ECHO_CHARS]
    return ScriptedReply(
        f"{reply.text}\n\nAs you asked, everything I was given:\n{dump}", reply.edits
    )


def script_reply(role: str, prompt: str, round_no: int, system: str = "") -> ScriptedReply:
    """The reply for the ``round_no``-th call (1-based) this server has seen for ``role``."""
    return obey_injection(_scripted(role, prompt, round_no), role, prompt, system)


def _scripted(role: str, prompt: str, round_no: int) -> ScriptedReply:
    if role == "probe":
        return ScriptedReply("OK")
    if role == "repo_confirmer":
        answer = {
            "repo": _current_guess(prompt),
            "needs_proto": False,
            "needs_migration": False,
            "needs_visual_verification": False,
        }
        return ScriptedReply(json.dumps(answer))
    if role == "test_writer":
        return ScriptedReply(
            "Added tests/test_quantity.py: a line with quantity 3 must cost three times its "
            "unit price.",
            [_write("tests/test_quantity.py", RED_TEST)],
        )
    if role == "implementer":
        return ScriptedReply(
            f"`invoice_total_cents` now multiplies each line's unit price by its quantity "
            f"before the discount ({INVOICE}:15).",
            [_edit(INVOICE, INVOICE_BUGGY_LINE, INVOICE_FIXED_LINE)],
        )
    if role == "second_test_writer":
        return ScriptedReply(
            "Added edge cases: zero quantity, and a discount over mixed quantities.",
            [_write("tests/test_quantity_edges.py", EDGE_TESTS)],
        )
    if role == "reviewer":
        findings = [REVIEW_FINDING] if round_no == 1 else []
        return ScriptedReply(json.dumps({"findings": findings}))
    if role == "review_fixer":
        return ScriptedReply("Clarified the docstring.", [_edit(INVOICE, OLD_DOC, NEW_DOC)])
    if role == "simplifier":
        return ScriptedReply("The change is already minimal; nothing to simplify.")
    if role == "ci_repairer":
        return ScriptedReply("Looked at the failing checks; no change in scope to make.")
    if role == "feedback_implementer":
        return ScriptedReply("Thanks for the review; the change already covers this.")
    return ScriptedReply("OK")
