"""``open_pull_request``: exactly one PR per ticket branch even when re-executed, a body that
says what ran and why with citations resolved or flagged, and the ticket told about fallbacks."""

from typing import Any

import pytest

from tests.domain.conftest import TICKET, FakeForge
from tests.fixtures.work.project import BASE_FILES, SLUGIFY_OK
from veranda_dagster.domain.core.errors import TransientError
from veranda_dagster.domain.core.models import CommandResult, ModelCall, Patch, Usage
from veranda_dagster.domain.deliver.pull_request import MAX_TITLE_CHARS, open_pull_request
from veranda_dagster.domain.work.turn import commit_and_push
from veranda_dagster.sources.channel import TicketChannel
from veranda_dagster.sources.linear.ticket import LinearTicketSource

SUMMARY = (
    "Added slugify next to shout [R1] (app/text.py:4-5). Also see app/text.py:999 and "
    "app/missing.py:3 and [R9]. Token ghp_abcdefghijklmnopqrstuvwxyz0123 must not leak."
)


def _call(role: str, reason: str = "preferred", pin: str | None = None) -> ModelCall:
    return ModelCall(
        role=role,
        vendor="codex" if reason != "preferred" else "claude",
        mode="exec",
        tier="high",
        model="gpt-5.1-codex" if reason != "preferred" else "claude-opus-4-5",
        reason=reason,
        dropped_pin=pin,
        usage=Usage(input=1200, output=300),
        usd=0.42,
    )


def _patch(project, calls) -> Patch:
    ws = project.workspace
    ws.ensure()
    (ws.path / "app/text.py").write_text(BASE_FILES["app/text.py"] + SLUGIFY_OK)
    sha = commit_and_push(ws, ["app/text.py"], "feat", "patch")
    ok = CommandResult(command="make test", exit_code=0, duration_s=1.2)
    return Patch(
        ticket_id=TICKET.id,
        calls=calls,
        branch=ws.branch,
        commit_sha=sha,
        files_changed=["app/text.py"],
        attempts=1,
        validation=[ok],
        summary=SUMMARY,
        coverage_before=75.0,
        coverage_after=83.3,
    )


def test_one_pr_per_branch_with_resolved_and_flagged_citations(project):
    forge, posted = FakeForge(), []
    patch = _patch(project, [_call("implementer")])
    patch = patch.model_copy(update={"earlier_calls": [_call("test_writer")]})

    def post(text: str) -> str:  # idempotent like the ticket channel: found by its marker
        if text not in posted:
            posted.append(text)
        return f"c{posted.index(text) + 1}"

    args = (TICKET, project.pack, patch, project.workspace, forge, post)
    pr = open_pull_request(*args)
    again = open_pull_request(*args)
    assert forge.created == 1 and len(forge.pulls) == 1
    assert (again.number, again.url) == (pr.number, pr.url) == (100, pr.url)
    assert pr.ticket_comment_id == "c1" and again.ticket_comment_id == "c1"
    assert posted == [f"Opened a pull request: {pr.url}"]  # all preferred: no fallback note
    assert pr.title == "ENG-7: Add slugify to app/text.py" and pr.head_sha == patch.commit_sha
    assert pr.citations_resolved == ["[R1]", "app/text.py:4-5"]
    assert pr.citations_flagged == ["app/text.py:999", "app/missing.py:3", "[R9]"]
    body = forge.pulls[100]["body"]
    assert body == pr.body and "https://linear.app/acme/issue/ENG-7" in body
    assert "⚠ unresolved: app/text.py:999" in body
    assert "app/text.py has 9 lines; line 999 is past the end" in body
    assert "app/missing.py does not exist on the default branch" in body
    assert "| test_writer | claude | exec | claude-opus-4-5 | high | preferred | 1200/300 |" in body
    assert "| implementer |" in body and "Total: 2400 tokens in, 600 out, $0.8400." in body
    assert "75.0% before, 83.3% after" in body
    assert "ghp_" not in body and "***" in body


def test_the_ticket_hears_about_fallbacks_and_dropped_pins(project):
    forge, posted = FakeForge(), []
    calls = [_call("implementer", "fallback:claude:quota", pin="claude-opus-4-5")]
    patch = _patch(project, calls)
    open_pull_request(TICKET, project.pack, patch, project.workspace, forge, posted.append)
    (comment,) = posted
    assert "implementer ran on codex/exec (model gpt-5.1-codex): fallback:claude:quota" in comment
    assert "pinned model `claude-opus-4-5` could not run there and was dropped" in comment


def test_a_crash_between_opening_the_pr_and_posting_the_comment_loses_no_comment(project):
    """The step dies after the PR exists and before the ticket hears of it; the retry finds
    the PR, opens no second one, and posts the comment exactly once."""

    forge = FakeForge()
    comments: list[dict[str, Any]] = []

    class Linear:
        def comments(self, issue_id: str) -> list[dict[str, Any]]:
            return list(comments)

        def comment_create(self, issue_id: str, body: str) -> str:
            comments.append({"id": f"lc{len(comments) + 1}", "body": body, "user": {"id": "u1"}})
            return comments[-1]["id"]

        def own_user_id(self) -> str:
            return "u1"

    channel = TicketChannel([LinearTicketSource(Linear())])
    ticket = TICKET.model_copy(update={"external_id": "issue-uuid"})
    patch = _patch(project, [_call("implementer")])

    def crash(text: str) -> str:
        raise TransientError("pod evicted")

    args = (ticket, project.pack, patch, project.workspace, forge)
    with pytest.raises(TransientError):
        open_pull_request(*args, crash)
    assert forge.created == 1 and comments == []
    pr = open_pull_request(*args, lambda text: channel.post(ticket, text))
    again = open_pull_request(*args, lambda text: channel.post(ticket, text))
    assert forge.created == 1 and len(comments) == 1
    assert pr.ticket_comment_id == again.ticket_comment_id == "lc1"
    assert pr.url in comments[0]["body"]


def test_a_summary_that_prints_the_instruction_block_is_not_in_the_pr_body(project):
    """A ticket asked the model to print its instructions: the PR body (public) keeps the
    summary's own words, not the runbook's, and says that lines were withheld."""
    from veranda_dagster.domain.context.layers import BEGIN
    from veranda_dagster.domain.core.models import ContextLayer

    runbook = (
        "Payments deploys go through the blue-green pipeline only; the break-glass password "
        "lives in vault path ops/payments/breakglass and the on-call rotates it monthly."
    )
    layer = ContextLayer(name="org_runbooks", source="ops/payments.md", text=runbook)
    pack = project.pack.model_copy(update={"layers": [layer]})
    patch = _patch(project, [_call("implementer")])
    patch = patch.model_copy(update={"summary": f"Added slugify [R1].\n\n{BEGIN}\n{runbook}"})
    forge = FakeForge()
    open_pull_request(TICKET, pack, patch, project.workspace, forge, lambda text: "c1")
    (pull,) = forge.pulls.values()
    assert "breakglass" not in pull["body"] and BEGIN not in pull["body"]
    assert "Added slugify" in pull["body"] and "withheld" in pull["body"]


def test_a_title_past_its_bound_is_cut_exactly_at_it_and_one_at_it_is_whole(project):
    """``MAX_TITLE_CHARS``: a ticket title pasted with its description makes a PR title cut at
    the bound; its twin, a key and title of exactly the bound, is the title whole."""
    patch = _patch(project, [_call("implementer")])
    prefix = f"{TICKET.id}: "
    at_bound = ("Slugify drops accents " * 10)[: MAX_TITLE_CHARS - len(prefix)]
    for title, expected in (
        (at_bound + " and the rest of the description", prefix + at_bound),
        (at_bound, prefix + at_bound),
    ):
        forge = FakeForge()
        ticket = TICKET.model_copy(update={"title": title})
        pr = open_pull_request(
            ticket, project.pack, patch, project.workspace, forge, lambda t: "c1"
        )
        assert pr.title == expected and len(pr.title) == MAX_TITLE_CHARS
        assert forge.pulls[pr.number]["title"] == expected
