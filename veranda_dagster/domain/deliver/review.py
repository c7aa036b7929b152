"""Self-review after the PR exists: a simplify pass, then fix-and-re-review, at most five rounds.

The simplifier goes first because the cheapest review finding is the code that is no longer
there. Then each round a reviewer seat reads the diff and answers strict JSON; an empty
``findings`` list means nothing is left and the loop stops ``clean``. Otherwise the implementer
seat fixes the findings, the repository's own checks run, and a green fix is committed and
pushed (a red one is reverted, so the PR never regresses). After ``MAX_REVIEW_ROUNDS`` rounds it
stops ``bound``: an unbounded self-review loop spends money until someone notices.

Each finished round leaves a marker on the PR naming the commit it reviewed and the head it
left. A later attempt (a step retry, a backfill) reuses recorded rounds only when they form an
unbroken chain that ends at the PR's head now: a backfill that produced a new commit is
reviewed again, whatever the markers say. Reused rounds cost nothing new: their calls stay out
of the value's ``calls`` and are listed in ``reused`` with the run that paid for them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from veranda_dagster.domain.clone.workspace import GitError, Workspace
from veranda_dagster.domain.core.agent import AgentPort
from veranda_dagster.domain.core.bounds import (
    MAX_EXTRACT_TEXT_CHARS,
    MAX_REVIEW_ROUNDS,
    VALIDATION_TIMEOUT_S,
)
from veranda_dagster.domain.core.documents import json_or_none
from veranda_dagster.domain.core.forge_port import BOT_MARKER, Comment, Forge, truncation
from veranda_dagster.domain.core.models import (
    ContextPack,
    ModelCall,
    PullRequest,
    Reuse,
    ReviewRound,
    ReviewRounds,
    Strict,
    Ticket,
)
from veranda_dagster.domain.core.provenance import current_run_id
from veranda_dagster.domain.deliver.progress import bounded_findings, marker, read_markers
from veranda_dagster.domain.work.prompts import fixer_prompt, reviewer_prompt, simplifier_prompt
from veranda_dagster.domain.work.turn import (
    calls_usd,
    commit_and_push,
    prepare,
    revert,
    turn,
    worktree_changes,
)
from veranda_dagster.domain.work.validation import run_validation

PHASE = "review_rounds"
PROGRESS_KIND = "review_round"
_FENCE_OPEN = re.compile(r"```(?:json)?\s*(?=\{)")
_FENCE_CLOSE = re.compile(r"\}\s*```")


def _fenced_objects(text: str) -> list[str]:
    """Each ```` ```json {...} ``` ```` body, as ``"```(?:json)?\\s*(\\{.*?\\})\\s*```"``
    would find them, in one forward pass: a lazy ``.*?`` rescans to the end from every opening
    fence, which 40 kB of ```` ```{ ```` made quadratic. Once one opening has no close, no later
    one can have either, so the scan stops there."""
    found: list[str] = []
    pos = 0
    while (opening := _FENCE_OPEN.search(text, pos)) is not None:
        closing = _FENCE_CLOSE.search(text, opening.end() + 1)
        if closing is None:
            break
        found.append(text[opening.end() : closing.start() + 1])
        pos = closing.end()
    return found


def parse_findings(text: str) -> list[str] | None:
    """The reviewer's findings as one line each, or ``None`` when the reply is not the
    required ``{"findings": [...]}`` JSON (an unreadable review is not a clean one)."""
    text = text[:MAX_EXTRACT_TEXT_CHARS]
    candidates = [text.strip(), *_fenced_objects(text)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for raw in candidates:
        data = json_or_none(raw)
        if isinstance(data, dict) and isinstance(data.get("findings"), list):
            return [_finding_line(f) for f in data["findings"]]
    return None


def _finding_line(item: Any) -> str:
    if isinstance(item, dict):
        where = item.get("path") or ""
        if where and item.get("line"):
            where = f"{where}:{item['line']}"
        message = str(item.get("message") or item.get("body") or json.dumps(item))
        return f"{where}: {message}" if where else message
    return str(item)


def _apply(
    workspace: Workspace, pack: ContextPack, repo: str, subject: str, timeout_s: float
) -> tuple[bool, str | None]:
    """Commit and push the seat's changes if the repo's checks pass; revert them otherwise."""
    changed = worktree_changes(workspace)
    if not changed:
        return False, None
    if not all(r.ok for r in run_validation(pack.facts, repo, timeout_s)):
        revert(workspace, changed)
        return False, None
    return True, commit_and_push(workspace, changed, subject, PHASE)


def review_rounds(
    ticket: Ticket,
    pack: ContextPack,
    pr: PullRequest,
    workspace: Workspace,
    agent: AgentPort,
    forge: Forge,
    *,
    validation_timeout_s: float = VALIDATION_TIMEOUT_S,
) -> ReviewRounds:
    repo = prepare(workspace, pack)
    calls: list[ModelCall] = []

    def diff() -> str:
        return workspace.git("diff", "--unified=3", f"{pack.base_sha}...HEAD")

    listed = forge.list_comments(pack.repo, pr.number)
    done = _recorded_rounds(listed, workspace)
    reused = [_reuse(r) for r in done.values()]
    if 0 not in done:
        reviewed = workspace.head_sha()
        simplify = turn(
            agent,
            "simplifier",
            "standard",
            simplifier_prompt(ticket, diff()),
            repo,
            ticket,
            tools=pack.mcp_servers,
        )
        calls.append(simplify.call)
        _apply(workspace, pack, str(repo), f"refactor({ticket.id}): simplify", validation_timeout_s)
        _record(forge, pack, pr, _recorded(0, [simplify.call], None, reviewed, workspace))
    rounds: list[ReviewRound] = []
    raised: list[str] = []
    for index in range(1, MAX_REVIEW_ROUNDS + 1):
        if index in done:  # resumed at the next round: this one finished before the retry
            recorded = done[index]
            rounds.append(recorded.round)  # type: ignore[arg-type]
            if recorded.round is not None and not recorded.round.findings:
                return _value(ticket, pack, pr, forge, calls, rounds, "clean", workspace, reused)
            raised += recorded.round.findings if recorded.round else []
            continue
        reviewed = workspace.head_sha()
        prompt = reviewer_prompt(ticket, diff(), raised)
        review = turn(agent, "reviewer", "standard", prompt, repo, ticket, tools=pack.mcp_servers)
        round_calls = [review.call]
        findings = parse_findings(review.text)
        if findings is None:
            findings = ["the reviewer's reply was not the required findings JSON"]
            fixed, sha = False, None
        elif not findings:
            calls += round_calls
            clean = ReviewRound(index=index, findings=[], fixed=False, usd=review.call.usd)
            rounds.append(clean)
            _record(forge, pack, pr, _recorded(index, round_calls, clean, reviewed, workspace))
            return _value(ticket, pack, pr, forge, calls, rounds, "clean", workspace, reused)
        else:
            fix = turn(
                agent,
                "implementer",
                "high",
                fixer_prompt(ticket, findings),
                repo,
                ticket,
                tools=pack.mcp_servers,
            )
            round_calls.append(fix.call)
            fixed, sha = _apply(
                workspace,
                pack,
                str(repo),
                f"fix({ticket.id}): review round {index}",
                validation_timeout_s,
            )
            raised += findings
        calls += round_calls
        finished = ReviewRound(
            index=index,
            findings=findings,
            fixed=fixed,
            commit_sha=sha,
            usd=calls_usd(round_calls),
        )
        rounds.append(finished)
        _record(forge, pack, pr, _recorded(index, round_calls, finished, reviewed, workspace))
    return _value(ticket, pack, pr, forge, calls, rounds, "bound", workspace, reused)


class RecordedRound(Strict):
    """One finished review round (index 0: the simplifier) as recorded on the PR."""

    index: int
    calls: list[ModelCall]
    round: ReviewRound | None = None
    reviewed_sha: str | None = None
    """The PR head the round started from: the commit it reviewed."""
    head_after: str | None = None
    """The head the round left (its fix's commit, or ``reviewed_sha`` when nothing landed)."""
    run_id: str = ""
    """The Dagster run that did, and paid for, the round."""


def _recorded(
    index: int,
    calls: list[ModelCall],
    done: ReviewRound | None,
    reviewed: str,
    workspace: Workspace,
) -> RecordedRound:
    return RecordedRound(
        index=index,
        calls=calls,
        round=done,
        reviewed_sha=reviewed,
        head_after=workspace.head_sha(),
        run_id=current_run_id(),
    )


def _reuse(recorded: RecordedRound) -> Reuse:
    what = "simplify pass" if recorded.index == 0 else f"review round {recorded.index}"
    return Reuse(
        what=what,
        run_id=recorded.run_id,
        commit=recorded.reviewed_sha,
        model_calls=len(recorded.calls),
        usd=round(sum(c.usd for c in recorded.calls), 6),
    )


def _record(forge: Forge, pack: ContextPack, pr: PullRequest, done: RecordedRound) -> None:
    """The round's progress marker, in a short bot comment on the PR."""
    if done.round is not None:
        done = done.model_copy(
            update={
                "round": done.round.model_copy(
                    update={"findings": bounded_findings(done.round.findings)}
                )
            }
        )
    what = "simplify pass" if done.index == 0 else f"review round {done.index}"
    body = f"Self-review: {what} done.\n{marker(PROGRESS_KIND, done.model_dump(mode='json'))}"
    forge.comment(pack.repo, pr.number, f"{body}\n{BOT_MARKER}")


def _recorded_rounds(listed: list[Comment], workspace: Workspace) -> dict[int, RecordedRound]:
    """Rounds an earlier attempt finished that still hold: an unbroken chain from round 0 (each
    round reviewed the head the one before it left) whose last round left the PR's head as it
    is now. A marker without the commits (an older release's), a chain that leads elsewhere
    (a backfill pushed a new commit), or a recorded fix not on the branch is not reused: that
    head is reviewed again."""
    by_index: dict[int, list[RecordedRound]] = {}
    for payload in read_markers(listed, PROGRESS_KIND):
        try:
            recorded = RecordedRound.model_validate(payload)
        except ValueError:
            continue
        if recorded.reviewed_sha and recorded.head_after and recorded.index >= 0:
            by_index.setdefault(recorded.index, []).append(recorded)
    head = workspace.head_sha()
    # the chains reaching each round, by the head they left (the newest marker wins a tie), so
    # their number is bounded by the distinct heads, not by the markers' combinations
    chains = {str(r.head_after): [r] for r in by_index.get(0, [])}
    best: list[RecordedRound] = []
    for index in range(1, MAX_REVIEW_ROUNDS + 2):
        best = chains.get(head, best)
        chains = {
            str(nxt.head_after): [*chains[str(nxt.reviewed_sha)], nxt]
            for nxt in by_index.get(index, [])
            if nxt.round is not None and str(nxt.reviewed_sha) in chains
        }
        if not chains:
            break
    trusted: dict[int, RecordedRound] = {}
    for entry in best:
        sha = entry.round.commit_sha if entry.round else None
        if sha and not _on_branch(workspace, sha):
            break
        trusted[entry.index] = entry
    return trusted


def _on_branch(workspace: Workspace, sha: str) -> bool:
    try:
        workspace.git("merge-base", "--is-ancestor", sha, "HEAD")
    except GitError:
        return False
    return True


def _value(
    ticket: Ticket,
    pack: ContextPack,
    pr: PullRequest,
    forge: Forge,
    calls: list[ModelCall],
    rounds: list[ReviewRound],
    stopped: str,
    workspace: Workspace,
    reused: list[Reuse],
) -> ReviewRounds:
    findings = sum(len(r.findings) for r in rounds)
    why = "nothing left to fix" if stopped == "clean" else f"the bound of {MAX_REVIEW_ROUNDS}"
    listed = forge.list_comments(pack.repo, pr.number)
    cut = truncation(listed)
    summary = (
        f"Self-review: {len(rounds)} round(s), {findings} finding(s), "
        f"{sum(r.fixed for r in rounds)} fixed; stopped at {why}.\n{BOT_MARKER}"
    )
    if all(c.body != summary for c in listed if c.by_self):
        forge.comment(pack.repo, pr.number, summary)  # once, even on a retry
    return ReviewRounds(
        ticket_id=ticket.id,
        calls=calls,
        rounds=rounds,
        stopped=stopped,  # type: ignore[arg-type]
        head_sha=workspace.head_sha(),
        reused=reused,
        truncated=[cut] if cut else [],
    )
