"""GitLab as the work loop's ``Forge``: merge requests, notes and discussions, CI, findings.

``GitLabClient`` satisfies ``domain.work.forge.Forge`` in the forge's own terms, so the work
phases run unchanged on GitLab:

- a *pull request* is a merge request, numbered by its project-scoped ``iid``; one per source
  branch: ``find`` looks it up (``source_branch=``, ``state=opened``) before ``create`` posts,
  and a ``409`` ("Another open merge request already exists for this source branch") answers
  with the one that won the race;
- *check runs* are the jobs of the newest pipeline for the commit (``gitlab_ci``);
- *annotations* are the job's Code Quality / SAST findings, returned in the check-annotation
  shape ``static_analysis.from_annotations`` reads, so the one CI repair is grounded in them;
- *review comments* are the diff notes of MR discussions (``position.new_path``/``new_line``),
  *issue comments* the discussion-less notes; system notes ("added 1 commit") are neither. A
  reply goes to the note's discussion (``POST .../discussions/:discussion_id/notes``).

Shapes are from docs.gitlab.com/api/merge_requests, /api/notes and /api/discussions.
"""

from __future__ import annotations

import re
from typing import Any

from veranda_dagster.clients._http import HttpStatusError
from veranda_dagster.clients.gitlab_base import project_ref
from veranda_dagster.clients.gitlab_ci import GitLabCI
from veranda_dagster.domain.errors import InputError
from veranda_dagster.domain.work.forge import Comment, ForgePR

BOT_USERNAME = re.compile(r"^(?:project|group)_\d+_bot(?:_[0-9a-f]+)?$|\[bot\]$|-bot$")
"""Users GitLab creates for project/group access tokens (``project_42_bot_<hex>``), and the
conventional bot suffixes: their notes are never human feedback."""


class GitLabClient(GitLabCI):
    # --- merge requests -----------------------------------------------------------------------

    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None:
        mrs = self._pages(
            f"/projects/{project_ref(repo)}/merge_requests",
            source_branch=head_branch,
            state="opened",
        )
        for mr in mrs:
            if mr.get("source_branch") == head_branch:
                return _merge_request(mr)
        return None

    def create_pull_request(
        self, repo: str, head: str, base: str, title: str, body: str
    ) -> tuple[int, str]:
        existing = self.find_pull_request(repo, head)
        if existing is not None:
            return existing.number, existing.url
        payload = {
            "source_branch": head,
            "target_branch": base,
            "title": title,
            "description": body,
            "remove_source_branch": True,
        }
        try:
            data = self._object(
                "POST", f"/projects/{project_ref(repo)}/merge_requests", json=payload
            )
        except HttpStatusError as exc:
            raced = self.find_pull_request(repo, head) if exc.status == 409 else None
            if raced is None:
                raise
            return raced.number, raced.url
        return int(data["iid"]), str(data["web_url"])

    def update_pull_request_body(self, repo: str, number: int, body: str) -> None:
        self._object(
            "PUT",
            f"/projects/{project_ref(repo)}/merge_requests/{int(number)}",
            json={"description": body},
        )

    # --- CI findings in the annotation shape ------------------------------------------------

    def list_annotations(self, repo: str, check_run_id: int) -> list[dict[str, Any]]:
        job = self.get_job(repo, check_run_id)
        return [
            {
                "path": v.path,
                "start_line": v.line,
                "end_line": v.end_line or v.line,
                "annotation_level": "failure",
                "title": v.rule,
                "message": v.message,
            }
            for v in self.job_findings(repo, job)
        ]

    def get_check_run_output(self, repo: str, check_run_id: int) -> str:
        job = self.get_job(repo, check_run_id)
        parts = [f"{job.get('name')}: {job.get('status')}", str(job.get("failure_reason") or "")]
        return "\n\n".join(p for p in parts if p)

    def get_check_run_log(self, repo: str, check_run_id: int) -> str | None:
        return self.job_log_tail(repo, check_run_id)

    # --- notes and discussions ----------------------------------------------------------------

    def discussions(self, repo: str, number: int) -> list[dict[str, Any]]:
        path = f"/projects/{project_ref(repo)}/merge_requests/{int(number)}/discussions"
        return self._pages(path)

    def _comments(self, repo: str, number: int) -> list[Comment]:
        out: list[Comment] = []
        for discussion in self.discussions(repo, number):
            notes = [n for n in discussion.get("notes") or [] if isinstance(n, dict)]
            first = notes[0]["id"] if notes else None
            for note in notes:
                if note.get("system"):
                    continue
                out.append(_note(note, str(discussion.get("id") or ""), first))
        return out

    def list_review_comments(self, repo: str, number: int) -> list[Comment]:
        return [c for c in self._comments(repo, number) if c.kind == "review"]

    def list_issue_comments(self, repo: str, number: int) -> list[Comment]:
        return [c for c in self._comments(repo, number) if c.kind == "issue"]

    def create_issue_comment(self, repo: str, number: int, body: str) -> int:
        data = self._object(
            "POST",
            f"/projects/{project_ref(repo)}/merge_requests/{int(number)}/notes",
            json={"body": body},
        )
        return int(data["id"])

    def reply_to_review_comment(self, repo: str, number: int, comment_id: int, body: str) -> int:
        """Reply in the discussion that holds note ``comment_id``."""
        for c in self._comments(repo, number):
            if c.id == comment_id and c.extra.get("discussion_id"):
                data = self._object(
                    "POST",
                    f"/projects/{project_ref(repo)}/merge_requests/{int(number)}"
                    f"/discussions/{c.extra['discussion_id']}/notes",
                    json={"body": body},
                )
                return int(data["id"])
        raise InputError(f"gitlab: note {comment_id} is not on merge request !{number}")


def _merge_request(data: dict[str, Any]) -> ForgePR:
    state = str(data.get("state") or "opened")
    return ForgePR(
        number=int(data["iid"]),
        url=str(data.get("web_url") or ""),
        head_ref=str(data.get("source_branch") or ""),
        head_sha=str(data.get("sha") or ""),
        state="open" if state == "opened" else state,
        body=str(data.get("description") or ""),
    )


def _note(note: dict[str, Any], discussion_id: str, first_id: Any) -> Comment:
    author = note.get("author") or {}
    username = str(author.get("username") or "")
    position = note.get("position") or {}
    is_diff = note.get("type") == "DiffNote" or bool(position)
    bot = bool(author.get("bot")) or bool(BOT_USERNAME.search(username))
    return Comment(
        id=int(note["id"]),
        kind="review" if is_diff else "issue",
        author=username,
        author_type="Bot" if bot else "User",
        body=str(note.get("body") or ""),
        path=position.get("new_path") or position.get("old_path") if is_diff else None,
        line=position.get("new_line") or position.get("old_line") if is_diff else None,
        in_reply_to=int(first_id) if first_id is not None and first_id != note["id"] else None,
        extra={"discussion_id": discussion_id},
    )
