"""Self-review after the PR exists: a simplify pass, then fix-and-re-review, at most five rounds.

The simplifier goes first because the cheapest review finding is the code that is no longer
there. Then each round a reviewer seat reads the diff and answers strict JSON; an empty
``findings`` list means nothing is left and the loop stops ``clean``. Otherwise the implementer
seat fixes the findings, the repository's own checks run, and a green fix is committed and
pushed (a red one is reverted, so the PR never regresses). After ``MAX_REVIEW_ROUNDS`` rounds it
stops ``bound``: an unbounded self-review loop spends money until someone notices.
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
from veranda_dagster.domain.core.forge_port import BOT_MARKER, Comment, Forge, truncation
from veranda_dagster.domain.core.models import (
    ContextPack,
    ModelCall,
    PullRequest,
    ReviewRound,
    ReviewRounds,
    Strict,
    Ticket,
)
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
        try:
            data: Any = json.loads(raw)
        except ValueError:
            continue
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
    if 0 in done:  # a retried step: the simplifier's turn is not paid for again
        calls += done[0].calls
    else:
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
        _record(forge, pack, pr, RecordedRound(index=0, calls=[simplify.call]))
    rounds: list[ReviewRound] = []
    raised: list[str] = []
    for index in range(1, MAX_REVIEW_ROUNDS + 1):
        if index in done:  # resumed at the next round: this one finished before the retry
            recorded = done[index]
            calls += recorded.calls
            rounds.append(recorded.round)  # type: ignore[arg-type]
            if recorded.round is not None and not recorded.round.findings:
                return _value(ticket, pack, pr, forge, calls, rounds, "clean", workspace)
            raised += recorded.round.findings if recorded.round else []
            continue
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
            _record(forge, pack, pr, RecordedRound(index=index, calls=round_calls, round=clean))
            return _value(ticket, pack, pr, forge, calls, rounds, "clean", workspace)
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
        _record(forge, pack, pr, RecordedRound(index=index, calls=round_calls, round=finished))
    return _value(ticket, pack, pr, forge, calls, rounds, "bound", workspace)


class RecordedRound(Strict):
    """One finished review round (index 0: the simplifier) as recorded on the PR."""

    index: int
    calls: list[ModelCall]
    round: ReviewRound | None = None


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
    """Rounds an earlier attempt finished, contiguous from 0; a round whose recorded commit is
    not on the branch (a forged or stale marker) ends the run of trusted rounds."""
    found: dict[int, RecordedRound] = {}
    for payload in read_markers(listed, PROGRESS_KIND):
        try:
            recorded = RecordedRound.model_validate(payload)
        except ValueError:
            continue
        found.setdefault(recorded.index, recorded)
    trusted: dict[int, RecordedRound] = {}
    for index in range(MAX_REVIEW_ROUNDS + 1):
        entry = found.get(index)
        if entry is None or (index > 0 and entry.round is None):
            break
        sha = entry.round.commit_sha if entry.round else None
        if sha and not _on_branch(workspace, sha):
            break
        trusted[index] = entry
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
        truncated=[cut] if cut else [],
    )
