"""Revisions on human PR comments, ten rounds at most over the PR's whole life.

Each materialization starts from the previous ``Feedback`` value, so comments already handled
are never answered twice and the round count survives re-materialization. The bot's own
comments (our account by user id, a bot author, a ``[bot]`` login) are never feedback; a
person's comment is, whatever markers it carries. One batch of new
comments is one round: one implementer turn with all of them, the repository's checks, a push,
and replies (in each review thread the batch opened, and one summary in the conversation). The
round that reaches ``MAX_FEEDBACK_ROUNDS`` says so on the PR, once, and every later call is a
no-op.

``calls`` holds only this materialization's turn (rounds accumulate, cost does not), so summing
USD over the asset's materializations counts each round once.
"""

from __future__ import annotations

from veranda_dagster.domain.clone.workspace import GitError, Workspace
from veranda_dagster.domain.core.agent import AgentPort
from veranda_dagster.domain.core.bounds import MAX_FEEDBACK_ROUNDS, VALIDATION_TIMEOUT_S
from veranda_dagster.domain.core.forge_port import (
    BOT_MARKER,
    Comment,
    Forge,
    human_comments,
    truncation,
)
from veranda_dagster.domain.core.models import (
    ContextPack,
    Feedback,
    FeedbackRound,
    ModelCall,
    PullRequest,
    Reuse,
    Ticket,
)
from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.domain.deliver.instruction_leaks import withhold_instructions
from veranda_dagster.domain.deliver.progress import (
    FEEDBACK_TRAILER,
    comments_digest,
    marker,
    read_markers,
)
from veranda_dagster.domain.work.prompts import feedback_prompt
from veranda_dagster.domain.work.turn import (
    commit_and_push,
    prepare,
    revert,
    turn,
    worktree_changes,
)
from veranda_dagster.domain.work.validation import failure_report, run_validation

PHASE = "feedback"
PROGRESS_KIND = "feedback_round"
MAX_REPLY_CHARS = 2_000
"""Of the agent's reply posted on the pull request for one feedback round: a reviewer reads
a paragraph or two; the rest of what the agent said is in the run's record."""
MAX_MARKER_REPLY_CHARS = 500
"""Of the reply carried in a round's progress marker (what a retried step records as the round's
reply without a model call): the reply itself is posted beside the marker, so an excerpt is
enough, and the marker stays small within the posted message (``progress``)."""
UNPUSHED_REPORT_CHARS = 1_500
"""Of each failing check's output quoted to the reviewer when a revision was not pushed: the
tail that says why; the rest is in the run's record."""
BOUND_NOTICE = (
    f"I have revised this pull request {MAX_FEEDBACK_ROUNDS} times, which is my limit; I will "
    "not make further changes on comments here. Please take it from here."
)


def new_comments(comments: list[Comment], processed: list[str]) -> list[Comment]:
    seen = set(processed)
    return [c for c in comments if c.id not in seen]


def _describe(c: Comment) -> str:
    """A comment as the prompt shows it; its body is anyone's text, so it is scrubbed with the
    high-entropy pass too (a pasted key has no shape the scrubber knows)."""
    where = f" on {c.path}:{c.line}" if c.path else ""
    hunk = f"\n```diff\n{c.diff_hunk}\n```" if c.diff_hunk else ""
    return f"@{c.author}{where}:{hunk}\n{scrub(c.body.strip(), high_entropy=True)}"


def process_feedback(
    ticket: Ticket,
    pack: ContextPack,
    pr: PullRequest,
    workspace: Workspace,
    agent: AgentPort,
    forge: Forge,
    previous: Feedback | None,
    *,
    validation_timeout_s: float = VALIDATION_TIMEOUT_S,
) -> Feedback:
    """One round on the new human comments, if any; the value says what the forge's list
    bound left out of them (``truncated``), so a cut is never silent."""
    prior = previous or Feedback(ticket_id=ticket.id, head_sha=pr.head_sha)
    if prior.bound_reached:
        return prior.model_copy(update={"calls": [], "truncated": []})
    listed = human_comments(forge, pack.repo, pr.number)
    value = _process(ticket, pack, pr, workspace, agent, forge, prior, listed, validation_timeout_s)
    cut = truncation(listed)
    return value.model_copy(update={"truncated": [cut] if cut else []})


def _process(
    ticket: Ticket,
    pack: ContextPack,
    pr: PullRequest,
    workspace: Workspace,
    agent: AgentPort,
    forge: Forge,
    prior: Feedback,
    listed: list[Comment],
    validation_timeout_s: float,
) -> Feedback:
    fresh = new_comments(listed, prior.processed_comment_ids)
    if not fresh:
        return prior.model_copy(update={"calls": []})
    if len(prior.rounds) >= MAX_FEEDBACK_ROUNDS:
        forge.comment(pack.repo, pr.number, f"{BOUND_NOTICE}\n{BOT_MARKER}")
        return prior.model_copy(update={"bound_reached": True, "calls": []})
    repo = prepare(workspace, pack)
    index = len(prior.rounds) + 1
    digest = comments_digest([c.id for c in fresh])
    resumed = _resume(forge, pack, pr, workspace, prior, fresh, index, digest)
    if resumed is not None:  # this round was pushed (or answered) before a crash: not redone
        return resumed
    reply = turn(
        agent,
        "implementer",
        "high",
        feedback_prompt(ticket, [_describe(c) for c in fresh]),
        repo,
        ticket,
        tools=pack.mcp_servers,
    )
    changed = worktree_changes(workspace)
    sha, note = None, ""
    if changed:
        results = run_validation(pack.facts, repo, validation_timeout_s)
        if all(r.ok for r in results):
            subject = f"fix({ticket.id}): review feedback\n\n{FEEDBACK_TRAILER}: {index} {digest}"
            sha = commit_and_push(workspace, changed, subject, PHASE)
        else:
            revert(workspace, changed)
            note = (
                "\n\nI could not make that change pass the repository's checks, so I did not "
                f"push it:\n```\n{failure_report(results, UNPUSHED_REPORT_CHARS)}\n```"
            )
    text = withhold_instructions(scrub(reply.text.strip()), pack.layers)[:MAX_REPLY_CHARS] + note
    bound = index >= MAX_FEEDBACK_ROUNDS
    _reply(forge, pack.repo, pr.number, fresh, text, sha, bound, digest)
    return _next(prior, fresh, index, sha, text, [reply.call], workspace)


def _next(
    prior: Feedback,
    fresh: list[Comment],
    index: int,
    sha: str | None,
    text: str,
    calls: list[ModelCall],
    workspace: Workspace,
    reused: list[Reuse] | None = None,
) -> Feedback:
    return Feedback(
        ticket_id=prior.ticket_id,
        calls=calls,
        reused=reused or [],
        rounds=[
            *prior.rounds,
            FeedbackRound(
                index=index, comment_ids=[c.id for c in fresh], commit_sha=sha, reply=text
            ),
        ],
        processed_comment_ids=[*prior.processed_comment_ids, *(c.id for c in fresh)],
        bound_reached=index >= MAX_FEEDBACK_ROUNDS,
        head_sha=sha or prior.head_sha or workspace.head_sha(),
    )


def _resume(
    forge: Forge,
    pack: ContextPack,
    pr: PullRequest,
    workspace: Workspace,
    prior: Feedback,
    fresh: list[Comment],
    index: int,
    digest: str,
) -> Feedback | None:
    """The round for these comments as an earlier attempt left it on the forge: answered (its
    summary's marker names the batch) or pushed (its commit's trailer does). None if neither."""
    for payload in read_markers(forge.list_comments(pack.repo, pr.number), PROGRESS_KIND):
        if payload.get("digest") == digest:
            sha = payload.get("sha") if isinstance(payload.get("sha"), str) else None
            text = str(payload.get("reply") or "")
            done = Reuse(what=f"feedback round {index} (answered)", commit=sha)
            return _next(prior, fresh, index, sha, text, [], workspace, [done])
    sha = _pushed_round(workspace, digest)
    if sha is None:
        return None
    text = "I had already pushed the change for these comments before an interruption."
    _reply(forge, pack.repo, pr.number, fresh, text, sha, index >= MAX_FEEDBACK_ROUNDS, digest)
    pushed = Reuse(what=f"feedback round {index} (pushed)", commit=sha)
    return _next(prior, fresh, index, sha, text, [], workspace, [pushed])


def _pushed_round(workspace: Workspace, digest: str) -> str | None:
    """The branch's commit (as fetched from the forge) whose trailer names this batch."""
    try:
        log = workspace.git(
            "log", "--format=%H%x00%B%x01", f"refs/remotes/origin/{workspace.branch}"
        )
    except GitError:  # the branch is not on the forge: nothing was pushed
        return None
    for entry in log.split("\x01"):
        sha, _, body = entry.strip().partition("\0")
        if any(
            line.startswith(f"{FEEDBACK_TRAILER}:") and line.split()[-1] == digest
            for line in body.splitlines()
        ):
            return sha
    return None


def _reply(
    forge: Forge,
    repo: str,
    number: int,
    comments: list[Comment],
    text: str,
    sha: str | None,
    bound: bool,
    digest: str,
) -> None:
    pushed = f"Pushed {sha[:12]}." if sha else "No code change was pushed."
    for c in comments:
        if c.thread is not None and not c.is_reply:  # a review thread this batch opened
            forge.reply(repo, number, c, f"{pushed}\n{BOT_MARKER}")
    summary = f"{text}\n\n{pushed}"
    if bound:
        summary += f"\n\n{BOUND_NOTICE}"
    progress = marker(
        PROGRESS_KIND, {"digest": digest, "sha": sha, "reply": text[:MAX_MARKER_REPLY_CHARS]}
    )
    forge.comment(repo, number, f"{summary}\n{progress}\n{BOT_MARKER}")
