"""The instructions each seat gets. Short on purpose: the context layers are already in the
clone as the CLI's instruction file, so a prompt says only what this turn is for.

Every prompt opens with a ``Role: <seat>`` line (``role_line``): a stable, machine-readable
name for the seat, so anything reading a transcript (the scripted model of the simulation,
a log search, a person) need not recognise a seat by its wording, and rewording a prompt
breaks nothing. The seat names are finer than ``AgentRequest.role`` (which accounts cost):
the review fixer and the feedback reviser both bill as the implementer."""

from __future__ import annotations

from veranda_dagster.domain.core.agent import role_line
from veranda_dagster.domain.core.models import ContextPack, Ticket
from veranda_dagster.domain.work.validation import validation_commands

SEATS = (
    "repo_confirmer",
    "test_writer",
    "implementer",
    "second_test_writer",
    "simplifier",
    "reviewer",
    "review_fixer",
    "ci_repairer",
    "feedback_implementer",
)
"""Every seat a prompt is written for (plus ``probe``, the health check's)."""

MAX_PROMPT_SECTION_BYTES = 6_000
"""A section of feedback (failing output, a diff) cut to its tail; the tail is where it broke."""
RED_OUTPUT_PROMPT_BYTES = 2_000
"""Of the red tests' failing output in the implementer's prompt: the assertion and the lines
around it; the implementer runs the tests itself for the rest."""


def _cut(text: str, limit: int = MAX_PROMPT_SECTION_BYTES) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return "…" + data[-limit:].decode("utf-8", errors="ignore")


def ticket_block(ticket: Ticket) -> str:
    link = f"\nLink: {ticket.url}" if ticket.url else ""
    return f"Ticket {ticket.id}: {ticket.title}{link}\n\n{ticket.description.strip()}\n"


def pack_block(pack: ContextPack) -> str:
    if not pack.citations:
        return "No code was retrieved for this ticket; explore the repository yourself.\n"
    paths = {f.path: f for f in pack.files}
    rows = [f"- [{c.id}] {c.path} lines {c.start}-{c.end}" for c in pack.citations]
    return (
        "Retrieved code (full windows are in your instruction file; cite only these ids or real "
        f"path:line references on the default branch; {len(paths)} files):\n" + "\n".join(rows)
    )


def red_tests_prompt(ticket: Ticket, pack: ContextPack, rejected: list[str]) -> str:
    retry = ""
    if rejected:
        retry = (
            "\nYour previous tests were rejected and reverted:\n"
            + "\n".join(f"- {r}" for r in rejected)
            + "\nWrite new ones that avoid this.\n"
        )
    return (
        f"{role_line('test_writer')}"
        f"{ticket_block(ticket)}\n{pack_block(pack)}\n\n"
        "You are the test writer. Before anything is implemented, write automated tests that "
        "define 'done' for this ticket. Only add or change test files; do not touch the code "
        "under test. The tests must FAIL on the current code because the behaviour is missing "
        "(an assertion, or a missing attribute), not because of a typo, a syntax error, or an "
        "import that breaks collection: import the module under test at the top only if it "
        "already exists, and reach new names through it inside each test. Do not commit.\n"
        f"Test command: {', '.join(pack.facts.test) or 'the repository default'}\n{retry}"
    )


def implementer_prompt(
    ticket: Ticket, pack: ContextPack, red_files: list[str], red_output: str, problems: str
) -> str:
    fix = f"\nThe previous attempt did not pass. Fix this:\n{_cut(problems)}\n" if problems else ""
    red = _cut(red_output, RED_OUTPUT_PROMPT_BYTES)
    return (
        f"{role_line('implementer')}"
        f"{ticket_block(ticket)}\n{pack_block(pack)}\n\n"
        "You are the implementer. Change the code so these tests pass without editing them: "
        f"{', '.join(red_files)}.\nThey currently fail like this:\n{red}\n"
        "The repository's own checks must pass too: "
        f"{', '.join(validation_commands(pack.facts)) or 'none found'}."
        "\nEnd your reply with a short summary of the change for the pull request; cite code "
        "as [Rn] or path:line. Do not commit.\n"
        f"{fix}"
    )


def second_writer_prompt(ticket: Ticket, pack: ContextPack, diff: str) -> str:
    return (
        f"{role_line('second_test_writer')}"
        f"{ticket_block(ticket)}\n"
        "You are an independent tester who did not write this change. Read the ticket and the "
        "diff below, then add tests for the cases the ticket implies and the change might get "
        "wrong: edge cases, error paths, boundaries. Add new test files only; do not edit code "
        "or existing tests. Tests that fail are welcome if they reveal a real defect. Do not "
        f"commit.\n\nDiff under test:\n{_cut(diff)}\n"
    )


def simplifier_prompt(ticket: Ticket, diff: str) -> str:
    return (
        f"{role_line('simplifier')}"
        f"{ticket_block(ticket)}\n"
        "You are the simplifier. Make this change smaller and clearer without changing what it "
        "does: remove dead code, duplication and needless indirection in the lines it added. "
        f"Do not touch tests' assertions. Do not commit.\n\nThe change:\n{_cut(diff)}\n"
    )


REVIEW_FORMAT = (
    'Reply with JSON only: {"findings": [{"path": "...", "line": 1, "message": "..."}]}. '
    'An empty list means nothing is left to fix: {"findings": []}.'
)


def reviewer_prompt(ticket: Ticket, diff: str, previous: list[str]) -> str:
    before = ""
    if previous:
        before = "\nFindings already raised and addressed:\n" + "\n".join(
            f"- {p}" for p in previous[-20:]
        )
    return (
        f"{role_line('reviewer')}"
        f"{ticket_block(ticket)}\n"
        "You are the reviewer. Review this diff for correctness against the ticket, bugs, "
        f"security, and missing tests. Report only real problems.{before}\n\n"
        f"The diff:\n{_cut(diff)}\n\n{REVIEW_FORMAT}\n"
    )


def fixer_prompt(ticket: Ticket, findings: list[str]) -> str:
    rows = "\n".join(f"- {f}" for f in findings)
    return (
        f"{role_line('review_fixer')}"
        f"{ticket_block(ticket)}\n"
        "You are the implementer. A reviewer raised these findings on your change; fix each "
        f"one, keeping the tests passing. Do not commit.\n{rows}\n"
    )


def ci_repair_prompt(ticket: Ticket, checks: list[str], grounding: str, kind: str) -> str:
    if kind == "violations":
        what = (
            "The static-analysis gate failed on lines this change added. Fix exactly these "
            "violations, on these lines, and nothing else (other findings in the repository "
            f"belong to other changes):\n{grounding}\n"
        )
    else:
        what = f"No structured findings were available; the end of the failing log:\n{grounding}\n"
    return (
        f"{role_line('ci_repairer')}"
        f"{ticket_block(ticket)}\n"
        f"You are the CI repairer. CI failed on this pull request: {', '.join(checks)}.\n"
        f"{what}This is the only repair attempt. Do not commit.\n"
    )


def feedback_prompt(ticket: Ticket, comments: list[str]) -> str:
    rows = "\n\n".join(comments)
    return (
        f"{role_line('feedback_implementer')}"
        f"{ticket_block(ticket)}\n"
        "You are the implementer. People reviewed your pull request; revise the change to "
        "address their comments (keep the tests passing), then reply with a short message to "
        f"them saying what you changed. Do not commit.\n\n{_cut(rows)}\n"
    )
