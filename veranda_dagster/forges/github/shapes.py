"""GitHub's REST shapes read as the forge port's values: pull requests, CI jobs, findings,
comments.

Kept apart from the HTTP client because it is GitHub's vocabulary, not its transport: which of
a check run's ``status``/``conclusion`` pairs mean pending, running, passed or failed
(docs.github.com/rest/checks/runs), how an annotation's ``annotation_level`` and ``title``
become a finding's severity and rule, and how two comment id spaces become one. The work
phases only ever see the neutral values.
"""

from __future__ import annotations

from typing import Any

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.forge_port import CiFinding, CiJob, Comment, ForgePR, Severity
from veranda_dagster.domain.core.models import CiState
from veranda_dagster.domain.intake.ticket_bounds import bound_comment
from veranda_dagster.domain.work.static_analysis import report_end_line, report_line

FAILING_CONCLUSIONS = frozenset(
    {"failure", "timed_out", "cancelled", "action_required", "startup_failure", "stale"}
)
"""Conclusions that fail the commit: each becomes a state the port counts as failing."""

_SETTLED: dict[str, CiState] = {"success": "passed", "skipped": "skipped", "neutral": "neutral"}
_SEVERITY: dict[str, Severity] = {"failure": "error", "warning": "warning"}
"""``notice`` annotations (and any level GitHub adds later) are advice."""


def check_run_state(status: str, conclusion: str | None) -> CiState:
    """A check run's ``status`` and ``conclusion`` as one state; a completed run without a
    conclusion GitHub knows as failing neither passes nor fails (``neutral``)."""
    if status == "in_progress":
        return "running"
    if status != "completed":
        return "pending"  # queued, requested, waiting, pending
    if conclusion in FAILING_CONCLUSIONS:
        return "cancelled" if conclusion == "cancelled" else "failed"
    return _SETTLED.get(conclusion or "", "neutral")


def ci_job(data: dict[str, Any]) -> CiJob:
    """One check run (an entry of ``check_runs``) as a ``CiJob``."""
    return CiJob(
        id=str(int(data["id"])),
        name=str(data.get("name") or ""),
        state=check_run_state(str(data.get("status") or "queued"), data.get("conclusion")),
    )


def ci_finding(annotation: dict[str, Any], tool: str) -> CiFinding | None:
    """One annotation as a finding; ``None`` for one not anchored to a file. The rule is the
    annotation's title, else the message's first word (ruff's ``F401 ...`` style)."""
    path = str(annotation.get("path") or "")
    if not path:
        return None
    message = str(annotation.get("message") or "")
    start = report_line(annotation.get("start_line"))
    return CiFinding(
        path=path,
        start_line=start,
        end_line=report_end_line(annotation.get("end_line"), start),
        rule=str(annotation.get("title") or "").strip() or message.split(" ", 1)[0],
        message=message,
        severity=_SEVERITY.get(str(annotation.get("annotation_level") or ""), "notice"),
        tool=tool,
    )


def check_run_id(job: CiJob) -> int:
    """The check run's numeric id back from a ``CiJob`` this client made."""
    if not job.id.isdigit():
        raise InputError(f"github: check run id {job.id!r} is not a number")
    return int(job.id)


def pull_request(data: dict[str, Any]) -> ForgePR:
    head = data.get("head") or {}
    return ForgePR(
        number=int(data["number"]),
        url=str(data["html_url"]),
        head_ref=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        state=str(data.get("state") or "open"),
        body=str(data.get("body") or ""),
    )


def written_by(data: dict[str, Any], user_id: int | None) -> bool:
    """The comment's author is the account ``user_id`` (by id: a login can be lookalike) and it
    was not edited since (the product never edits one, so an edit is someone else's)."""
    author = (data.get("user") or {}).get("id")
    unedited = data.get("updated_at") in (None, data.get("created_at"))
    return user_id is not None and isinstance(author, int) and author == user_id and unedited


def review_comment(data: dict[str, Any], own_id: int | None = None) -> Comment:
    """A review comment in its thread, which GitHub names by the thread's root comment."""
    root = data.get("in_reply_to_id")
    user = data.get("user") or {}
    return Comment(
        id=f"review:{int(data['id'])}",
        author=str(user.get("login") or ""),
        body=bound_comment(str(data.get("body") or "")),
        thread=str(int(root if root is not None else data["id"])),
        is_reply=root is not None,
        bot_author=user.get("type") == "Bot",
        path=data.get("path"),
        line=data.get("line"),
        diff_hunk=data.get("diff_hunk"),
        by_self=written_by(data, own_id),
    )


def issue_comment(data: dict[str, Any], own_id: int | None = None) -> Comment:
    user = data.get("user") or {}
    return Comment(
        id=f"issue:{int(data['id'])}",
        author=str(user.get("login") or ""),
        body=bound_comment(str(data.get("body") or "")),
        bot_author=user.get("type") == "Bot",
        by_self=written_by(data, own_id),
    )
