"""What the work phases need from the forge, as a Protocol, and the values it returns.

The phases never see HTTP, and never a forge's own vocabulary: each forge's client
(``forges/<name>/`` each) maps its API onto these values, and phase tests pass an
in-memory forge. Three things are said once here, whatever a forge keeps behind them:

- **CI** is a list of jobs for a commit, each in one ``CiState``; a failed job's findings
  arrive typed (``CiFinding``), its report text and its log tail on request. How a forge
  spells "failed" (and which of its outcomes count as failing) stays in its client.
- **Comments** share one id space per pull request, so a handled comment is remembered by its
  ``id`` alone. Each carries where an answer to it goes: a code-review ``thread`` (the forge's
  own handle for it), or ``None`` for the PR's top-level conversation. ``reply`` follows that
  target; ``comment`` always writes in the conversation.
- **The bot's own words** are told apart by identity, never by text: the client learns its
  own account's user id once and sets ``by_self`` on the comments that account wrote and nobody
  edited since. Only those carry progress the phases trust; a marker anyone else pastes is
  text. Another bot's comments (``bot_author``, a ``[bot]`` login) are not feedback either.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from veranda_dagster.domain.core.models import CI_FAILING_STATES, CI_RUNNING_STATES, CiState

BOT_MARKER = "<!-- veranda -->"
"""Appended to everything the bot posts, for people and other tools reading the PR. It proves
nothing: anyone can type it, so the product never reads it back (``Comment.by_self`` does)."""

Severity = Literal["error", "warning", "notice"]
"""How loud a finding is: ``notice`` is advice and never grounds a repair."""


@dataclass(frozen=True)
class ForgePR:
    number: int
    url: str
    head_ref: str
    head_sha: str = ""
    state: str = "open"
    body: str = ""


@dataclass(frozen=True)
class CiJob:
    """One CI job that ran (or will run) on a commit."""

    id: str
    """The forge's id for the job, opaque here; the client reads it back."""
    name: str
    state: CiState

    @property
    def done(self) -> bool:
        return self.state not in CI_RUNNING_STATES

    @property
    def failing(self) -> bool:
        return self.state in CI_FAILING_STATES


@dataclass(frozen=True)
class CiFinding:
    """One finding a CI job reported against a file: what the repair prompt is grounded in."""

    path: str
    start_line: int
    end_line: int | None
    rule: str
    message: str
    severity: Severity
    tool: str
    """What reported it (the job's name when the forge does not say)."""


@dataclass(frozen=True)
class Comment:
    """One comment on a pull request: a code-review comment or one in the conversation."""

    id: str
    """Unique among the PR's comments on this forge (one id space, whatever the forge keeps)."""
    author: str
    body: str
    thread: str | None = None
    """The code-review thread the comment is in, as the forge names it; ``None``: the PR's
    top-level conversation, where an answer is a new comment."""
    is_reply: bool = False
    """It answers an earlier comment in its thread (so it did not open the thread)."""
    bot_author: bool = False
    """The forge says the author is an app or a bot account."""
    path: str | None = None
    line: int | None = None
    diff_hunk: str | None = None
    by_self: bool = False
    """Written by this client's own account (the forge's user id, learned once, not the login
    or the text) and not edited since (the product never edits a comment, so an edit is
    someone else's). The only comments whose progress markers are read."""

    @property
    def by_bot(self) -> bool:
        """Ours or another bot's: never feedback. A marker in the body does not count."""
        return self.by_self or self.bot_author or self.author.endswith("[bot]")


class Comments(list[Comment]):
    """A PR's comments as a forge listed them, and what its list bound left out: a list anyone
    can grow is read newest first past its bound (the client's job), and a cut is said, never
    silent. A plain ``list`` is a complete listing."""

    def __init__(self, items: Iterable[Comment] = (), truncated: str | None = None) -> None:
        super().__init__(items)
        self.truncated = truncated
        """What the bound left out, in words; ``None`` when nothing was."""


def truncation(comments: list[Comment]) -> str | None:
    """What a listing's bound left out, if it says (``Comments.truncated``)."""
    return comments.truncated if isinstance(comments, Comments) else None


@runtime_checkable
class Forge(Protocol):
    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None: ...

    def create_pull_request(
        self, repo: str, head: str, base: str, title: str, body: str
    ) -> tuple[int, str]: ...

    def update_pull_request_body(self, repo: str, number: int, body: str) -> None: ...

    def list_ci_jobs(self, repo: str, sha: str) -> list[CiJob]:
        """The commit's latest CI jobs; ``[]`` while none has been created yet."""
        ...

    def ci_findings(self, repo: str, job: CiJob) -> list[CiFinding]:
        """What ``job`` reported against files, of every severity; ``[]`` when nothing."""
        ...

    def ci_job_report(self, repo: str, job: CiJob) -> str:
        """The text a gate left as its report (a tool's JSON report may be inside it)."""
        ...

    def ci_job_log_tail(self, repo: str, job: CiJob) -> str | None:
        """The end of the job's log, if the forge keeps one for it."""
        ...

    def list_comments(self, repo: str, number: int) -> list[Comment]:
        """Every comment on the PR, review threads and conversation, bots' included, oldest
        first; past the client's bound, the newest ones and a ``Comments.truncated`` note."""
        ...

    def comment(self, repo: str, number: int, body: str) -> str:
        """A new comment in the PR's conversation; its id."""
        ...

    def reply(self, repo: str, number: int, to: Comment, body: str) -> str:
        """An answer to ``to`` where it belongs (its thread, else the conversation); its id."""
        ...


def human_comments(forge: Forge, repo: str, number: int) -> Comments:
    """Every comment on the PR not written by a bot, in the forge's order, and the listing's
    truncation note."""
    listed = forge.list_comments(repo, number)
    return Comments((c for c in listed if not c.by_bot), truncation(listed))
