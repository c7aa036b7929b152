"""GitLab as the work loop's ``Forge``: merge requests, notes and discussions, CI, findings.

``GitLabClient`` satisfies ``domain.core.forge_port.Forge`` in the forge's own terms, so the work
phases run unchanged on GitLab:

- a *pull request* is a merge request, numbered by its project-scoped ``iid``; one per source
  branch: ``find`` looks it up (``source_branch=``, ``state=opened``) before ``create`` posts,
  and a ``409`` ("Another open merge request already exists for this source branch") answers
  with the one that won the race;
- *CI jobs* are the jobs of the newest pipeline for the commit and their *findings* the job's
  Code Quality / SAST reports (``gitlab_ci``), so the one CI repair is grounded in them;
- *comments* are the notes of the MR's discussions, one id space (``note:<id>``); system notes
  ("added 1 commit") are left out. A diff note's thread is its discussion, so a reply goes
  there (``POST .../discussions/:discussion_id/notes``); any other note is in the
  conversation, where an answer is a new note. A note's body is cut at the same bound as a
  GitHub comment's, since a reviewer's text goes into the feedback prompt.

Shapes are from docs.gitlab.com/api/merge_requests, /api/notes and /api/discussions.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from veranda_dagster.domain.core.bounds import MAX_FORGE_LIST_PAGES
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.forge_port import Comment, Comments, ForgePR
from veranda_dagster.domain.intake.ticket_bounds import bound_comment
from veranda_dagster.forges.gitlab.base import API, PER_PAGE, project_ref
from veranda_dagster.forges.gitlab.ci import GitLabCI
from veranda_dagster.http.client import HttpStatusError
from veranda_dagster.http.paging import Listing, Page, newest_first

BOT_USERNAME = re.compile(r"^(?:project|group)_\d+_bot(?:_[0-9a-f]+)?$|\[bot\]$|-bot$")
"""Users GitLab creates for project/group access tokens (``project_42_bot_<hex>``), and the
conventional bot suffixes: their notes are never human feedback."""


class GitLabClient(GitLabCI):
    _own_id: int | None = None
    """Our account's user id, once ``own_user_id`` has asked."""

    # --- merge requests -----------------------------------------------------------------------

    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None:
        """Our open MR from ``head_branch``: its source project is the target project itself;
        a fork's MR from a branch of the same name is someone else's."""
        mrs = self._pages(
            f"/projects/{project_ref(repo)}/merge_requests",
            source_branch=head_branch,
            state="opened",
        )
        for mr in mrs:
            source, target = mr.get("source_project_id"), mr.get("target_project_id")
            if mr.get("source_branch") == head_branch and source is not None and source == target:
                return _merge_request(mr)  # a fork's MR of the same branch name is not ours
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

    # --- notes and discussions ----------------------------------------------------------------

    def discussions(self, repo: str, number: int) -> Listing:
        """The MR's discussions, oldest first, read newest first past the page bound."""
        path = f"{API}/projects/{project_ref(repo)}/merge_requests/{int(number)}/discussions"

        def read_page(page: int) -> Page:
            response = self.request("GET", path, params={"per_page": PER_PAGE, "page": page})
            items = response.json()
            if not isinstance(items, list):
                raise InputError(f"gitlab {path}: response is not a JSON list")
            total = response.headers.get("x-total-pages", "").strip()
            more = response.headers.get("x-next-page", "").strip().isdigit() and bool(items)
            pages = int(total) if total.isdigit() else (None if more else page)
            return [i for i in items if isinstance(i, dict)], pages, more

        return newest_first(read_page, MAX_FORGE_LIST_PAGES, f"gitlab {path}")

    def own_user_id(self) -> int:
        """Our account's user id (``GET /user``; a project or group token's bot user answers
        too), asked once: progress is read only from notes this id wrote."""
        if self._own_id is None:
            found = self._object("GET", "/user").get("id")
            if not isinstance(found, int) or isinstance(found, bool):
                raise InputError("gitlab: GET /user did not name our own user id")
            self._own_id = found
        return self._own_id

    def list_comments(self, repo: str, number: int) -> Comments:
        own = self.own_user_id()
        listing = self.discussions(repo, number)
        out = Comments(truncated=listing.truncated)
        for discussion in listing.items:
            notes = [n for n in discussion.get("notes") or [] if isinstance(n, dict)]
            first = notes[0]["id"] if notes else None
            for note in notes:
                if note.get("system"):
                    continue
                out.append(_note(note, str(discussion.get("id") or ""), first, own))
        return out

    def comment(self, repo: str, number: int, body: str) -> str:
        data = self._object(
            "POST",
            f"/projects/{project_ref(repo)}/merge_requests/{int(number)}/notes",
            json={"body": body},
        )
        return f"note:{int(data['id'])}"

    def reply(self, repo: str, number: int, to: Comment, body: str) -> str:
        """In ``to``'s discussion, else a new note in the conversation."""
        if to.thread is None:
            return self.comment(repo, number, body)
        data = self._object(
            "POST",
            f"/projects/{project_ref(repo)}/merge_requests/{int(number)}"
            f"/discussions/{quote(to.thread, safe='')}/notes",
            json={"body": body},
        )
        return f"note:{int(data['id'])}"


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


def _note(note: dict[str, Any], discussion_id: str, first_id: Any, own_id: int) -> Comment:
    """A note; a diff note is in its discussion's thread, any other in the conversation. It is
    ours when its author's id is ours and it was not edited since (we never edit a note)."""
    author = note.get("author") or {}
    username = str(author.get("username") or "")
    position = note.get("position") or {}
    is_diff = note.get("type") == "DiffNote" or bool(position)
    return Comment(
        id=f"note:{int(note['id'])}",
        author=username,
        body=bound_comment(str(note.get("body") or "")),
        thread=discussion_id if is_diff and discussion_id else None,
        is_reply=first_id is not None and first_id != note["id"],
        bot_author=bool(author.get("bot")) or bool(BOT_USERNAME.search(username)),
        path=position.get("new_path") or position.get("old_path") if is_diff else None,
        line=position.get("new_line") or position.get("old_line") if is_diff else None,
        by_self=author.get("id") == own_id
        and note.get("updated_at") in (None, note.get("created_at")),
    )
