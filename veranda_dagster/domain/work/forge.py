"""What the work phases need from the forge, as a Protocol, and the values it returns.

The phases never see HTTP: each forge's client (``clients.forges`` lists them) implements this
against its REST API, and phase tests pass an in-memory forge. Comments carry enough to tell a
person from the bot (``author_type``, the ``[bot]`` suffix, our marker) and to reply in the
right thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

BOT_MARKER = "<!-- veranda -->"
"""Appended to everything the bot posts, so its own comments are never taken as feedback."""


@dataclass(frozen=True)
class ForgePR:
    number: int
    url: str
    head_ref: str
    head_sha: str = ""
    state: str = "open"
    body: str = ""


@dataclass(frozen=True)
class CheckRun:
    id: int
    name: str
    status: str
    conclusion: str | None = None
    title: str = ""
    summary: str = ""
    app: str = ""
    annotations_count: int = 0

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def failed(self) -> bool:
        return self.completed and self.conclusion in FAILING_CONCLUSIONS


FAILING_CONCLUSIONS = frozenset(
    {"failure", "timed_out", "cancelled", "action_required", "startup_failure", "stale"}
)


@dataclass(frozen=True)
class Comment:
    id: int
    kind: Literal["review", "issue"]
    author: str
    body: str
    author_type: str = "User"
    path: str | None = None
    line: int | None = None
    diff_hunk: str | None = None
    in_reply_to: int | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        """Unique across both comment kinds (their id spaces are separate)."""
        return f"{self.kind}:{self.id}"

    @property
    def by_bot(self) -> bool:
        return self.author_type == "Bot" or self.author.endswith("[bot]") or BOT_MARKER in self.body


@runtime_checkable
class Forge(Protocol):
    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None: ...

    def create_pull_request(
        self, repo: str, head: str, base: str, title: str, body: str
    ) -> tuple[int, str]: ...

    def update_pull_request_body(self, repo: str, number: int, body: str) -> None: ...

    def list_check_runs(self, repo: str, sha: str) -> list[CheckRun]: ...

    def list_annotations(self, repo: str, check_run_id: int) -> list[dict[str, Any]]: ...

    def get_check_run_output(self, repo: str, check_run_id: int) -> str:
        """The check's ``output`` title, summary and text (where gates put their reports)."""
        ...

    def get_check_run_log(self, repo: str, check_run_id: int) -> str | None:
        """The job log behind a check run (a CI job), if the forge has one."""
        ...

    def list_review_comments(self, repo: str, number: int) -> list[Comment]: ...

    def list_issue_comments(self, repo: str, number: int) -> list[Comment]: ...

    def create_issue_comment(self, repo: str, number: int, body: str) -> int: ...

    def reply_to_review_comment(
        self, repo: str, number: int, comment_id: int, body: str
    ) -> int: ...


def human_comments(forge: Forge, repo: str, number: int) -> list[Comment]:
    """Every review and issue comment on the PR not written by a bot, oldest first."""
    comments = forge.list_review_comments(repo, number) + forge.list_issue_comments(repo, number)
    return [c for c in comments if not c.by_bot]
