"""The pull request: opened once per ticket branch, saying what ran and why.

Look-before-create: the forge is asked for an open PR from the ticket's branch first, so a
re-executed run adopts its PR (and refreshes the body) instead of opening a twin. The body is
built from data, not by a model: the implementer's summary with every citation resolved against
the default branch (unresolvable ones marked in place and listed), the ticket link, and one row
per model call (vendor, mode, model, tier, why that vendor, tokens, USD). The ticket is told
once, when the PR is created, including any fallback: which vendor or model ran instead of the
preferred or pinned one, and why.
"""

from __future__ import annotations

from collections.abc import Callable

from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.core.forge_port import BOT_MARKER, Forge
from veranda_dagster.domain.core.models import (
    ContextPack,
    ModelCall,
    Patch,
    PullRequest,
    Ticket,
)
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.domain.deliver.citations import annotate, git_file_lines, resolve
from veranda_dagster.domain.deliver.instruction_leaks import withhold_instructions
from veranda_dagster.domain.work.turn import prepare

MAX_TITLE_CHARS = 120
"""Of a pull request's title (the ticket's key and title): lists and notifications show about
this much; a ticket title pasted with its whole description would otherwise be the title."""
PLANNED_REASONS = frozenset({"preferred", "pinned"})
"""Resolution reasons that are not a fallback."""


def is_fallback(call: ModelCall) -> bool:
    return call.reason not in PLANNED_REASONS or call.dropped_pin is not None


def calls_table(calls: list[ModelCall]) -> str:
    if not calls:
        return "_No model calls were recorded._\n"
    rows = [
        "| role | vendor | mode | model | tier | why | tokens in/out | USD |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in calls:
        why = c.reason + (f" (pin `{c.dropped_pin}` dropped)" if c.dropped_pin else "")
        rows.append(
            f"| {c.role} | {c.vendor} | {c.mode} | {c.model or 'default'} | {c.tier} | {why} "
            f"| {c.usage.input}/{c.usage.output} | {c.usd:.4f} |"
        )
    total = sum(c.usd for c in calls)
    tokens = (sum(c.usage.input for c in calls), sum(c.usage.output for c in calls))
    rows.append(f"\nTotal: {tokens[0]} tokens in, {tokens[1]} out, ${total:.4f}.")
    return "\n".join(rows) + "\n"


def fallback_lines(calls: list[ModelCall]) -> list[str]:
    lines = []
    for c in calls:
        if not is_fallback(c):
            continue
        what = f"{c.role} ran on {c.vendor}/{c.mode} (model {c.model or 'default'}): {c.reason}"
        if c.dropped_pin:
            what += f"; the pinned model `{c.dropped_pin}` could not run there and was dropped"
        lines.append(what)
    return list(dict.fromkeys(lines))


def _validation_lines(patch: Patch) -> str:
    rows = [
        f"- `{r.command}`: {'ok' if r.ok else 'FAILED'} ({r.duration_s:.1f}s)"
        for r in patch.validation
    ]
    cov = ""
    if patch.coverage_before is not None or patch.coverage_after is not None:
        cov = f"\nCoverage: {patch.coverage_before}% before, {patch.coverage_after}% after."
    return "\n".join(rows) + cov


def render_body(
    ticket: Ticket,
    pack: ContextPack,
    patch: Patch,
    summary: str,
    resolved: list[str],
    flagged: dict[str, str],
    calls: list[ModelCall],
) -> str:
    link = f"[{ticket.id}]({ticket.url})" if ticket.url else ticket.id
    cites = "\n".join(f"- `{r}` ✓" for r in resolved) or "- none"
    if flagged:
        cites += "\n\n**Unresolvable citations (not found on the default branch):**\n"
        cites += "\n".join(f"- `{raw}`: {why}" for raw, why in flagged.items())
    extra = ", ".join(f"`{f}`" for f in patch.extra_test_files) or "none"
    return (
        f"Ticket: {link}\n\n## What changed\n\n{summary.strip() or '_No summary._'}\n\n"
        f"## Validation\n\n{_validation_lines(patch)}\n\n"
        f"Tests added by the independent test writer: {extra}.\n\n"
        f"## Citations (resolved against `{pack.default_branch}` at `{pack.base_sha[:12]}`)\n\n"
        f"{cites}\n\n## What ran and why\n\n{calls_table(calls)}\n{BOT_MARKER}\n"
    )


def open_pull_request(
    ticket: Ticket,
    pack: ContextPack,
    patch: Patch,
    workspace: Workspace,
    forge: Forge,
    post_comment: Callable[[str], str | None],
) -> PullRequest:
    """Open (or adopt) the branch's PR; the calls of the phases before the patch (which it
    carries, ``Patch.earlier_calls``) head the what-ran table."""
    repo_dir = prepare(workspace, pack)
    report = resolve(patch.summary, pack.citations, git_file_lines(repo_dir, pack.base_sha))
    summary = withhold_instructions(annotate(patch.summary, report), pack.layers)
    calls = [*patch.earlier_calls, *patch.calls]
    title = scrub(f"{ticket.id}: {ticket.title}")[:MAX_TITLE_CHARS]
    body = scrub(render_body(ticket, pack, patch, summary, report.resolved, report.reasons, calls))
    existing = forge.find_pull_request(pack.repo, workspace.branch)
    if existing is not None:
        number, url = existing.number, existing.url
        if existing.body != body:
            forge.update_pull_request_body(pack.repo, number, body)
    else:
        number, url = forge.create_pull_request(
            pack.repo, workspace.branch, pack.default_branch, title, body
        )
    # Posted whenever the PR exists, not only when this attempt opened it: a crash between
    # opening and posting would otherwise lose the comment. ``post_comment`` is idempotent
    # (the ticket channel finds its own earlier comment by its marker), so a retry posts once.
    comment_id = post_comment(scrub(ticket_comment(url, calls)))
    return PullRequest(
        ticket_id=ticket.id,
        number=number,
        url=url,
        title=title,
        body=body,
        branch=workspace.branch,
        head_sha=patch.commit_sha,
        citations_resolved=report.resolved,
        citations_flagged=report.flagged,
        ticket_comment_id=comment_id,
    )


def ticket_comment(url: str, calls: list[ModelCall]) -> str:
    text = f"Opened a pull request: {url}"
    fallbacks = fallback_lines(calls)
    if fallbacks:
        text += "\n\nNot everything ran where it was meant to:\n" + "\n".join(
            f"- {line}" for line in fallbacks
        )
    return text
