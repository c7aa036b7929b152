"""Merge requests, notes, discussions, pipelines and jobs for the GitLab fake.

One open merge request per source branch (a second create is ``409`` with GitLab's message);
notes and discussions are kept per merge request, the product's own posts authored by the
fake's bot user, a person's by whoever the test names (``add_note``, ``add_diff_thread``). A
pipeline is made for a commit the first time it is asked about, and its jobs are ``FakeCI``'s
runs of the commit's ``make lint`` / ``make test``: a failing lint job keeps a Code Quality
report (``gl-code-quality-report.json``, Code Climate issues built from ruff's findings) and
lists it in ``artifacts`` as GitLab does, the job log is the command's output.
"""

from __future__ import annotations

import calendar
import itertools
import json
import time
from typing import TYPE_CHECKING, Any

from veranda_dagster.sim.bare_repo import BareRepo
from veranda_dagster.sim.fake_ci import CheckRun, FakeCI
from veranda_dagster.sim.http_fake import FakeRequest, FakeResponse

CODE_QUALITY_FILE = "gl-code-quality-report.json"
BOT_USER_ID = 1
"""The fake's bot user (the token's own user, ``GET /user``)."""
FORK_PROJECT_ID = 424242
"""The project a fork merge request comes from: not any project the fake serves."""
_JOB_STATUS = {"queued": "pending", "in_progress": "running"}
_JOB_CONCLUSION = {"success": "success", "cancelled": "canceled"}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def _later(stamp: str) -> str:
    """A second after ``stamp`` (an edit is always later than the creation)."""
    at = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S.000Z"))
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(at + 1))


def code_quality_report(annotations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Code Climate issues from check annotations (what ruff's ``gitlab`` format emits)."""
    return [
        {
            "type": "issue",
            "check_name": str(a.get("title") or "ruff"),
            "engine_name": "ruff",
            "description": str(a.get("message") or ""),
            "categories": ["Style"],
            "severity": "major",
            "fingerprint": f"{a.get('path')}:{a.get('start_line')}:{a.get('title')}",
            "location": {
                "path": a.get("path"),
                "lines": {"begin": a.get("start_line"), "end": a.get("end_line")},
            },
        }
        for a in annotations
    ]


class MergeRequestsAndPipelines:
    """Mixin for ``GitLabFake``: needs ``ci``, ``lock``, ``base_url``, ``bot_username``,
    ``_project_ids`` and ``paged`` from it."""

    if TYPE_CHECKING:
        ci: FakeCI
        lock: Any
        base_url: str
        bot_username: str
        _project_ids: dict[str, int]

        def paged(self, request: FakeRequest, rows: list[Any]) -> FakeResponse: ...

    def init_merge_requests(self) -> None:
        self.mrs: dict[str, dict[int, dict[str, Any]]] = {}
        self.discussions: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.pipelines: dict[int, dict[str, Any]] = {}
        self._pipeline_of: dict[tuple[str, str], int] = {}
        self._note_ids = itertools.count(5000)
        self._pipeline_ids = itertools.count(700)

    def merge_request_routes(self, p: str) -> list[tuple[str, str, Any]]:
        mr = f"/api/v4/projects/{p}/merge_requests"
        return [
            ("GET", "/api/v4/user", self._user),
            ("GET", mr, self._mr_list),
            ("POST", mr, self._mr_create),
            ("GET", mr + "/{n}", self._mr_get),
            ("PUT", mr + "/{n}", self._mr_update),
            ("GET", mr + "/{n}/notes", self._notes),
            ("POST", mr + "/{n}/notes", self._note_create),
            ("GET", mr + "/{n}/discussions", self._discussion_list),
            ("POST", mr + "/{n}/discussions/{d}/notes", self._discussion_reply),
            ("GET", f"/api/v4/projects/{p}/pipelines", self._pipeline_list),
            ("GET", f"/api/v4/projects/{p}/pipelines/{{id}}/jobs", self._jobs),
            ("GET", f"/api/v4/projects/{p}/jobs/{{id}}", self._job),
            ("GET", f"/api/v4/projects/{p}/jobs/{{id}}/trace", self._trace),
            ("GET", f"/api/v4/projects/{p}/jobs/{{id}}/artifacts{{path}}", self._artifact),
        ]

    # --- merge requests ------------------------------------------------------------------------

    def _mr_list(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        rows = list(self.mrs.get(repo.full_name, {}).values())
        branch, state = request.arg("source_branch"), request.arg("state")
        rows = [
            self._mr_json(repo, m)
            for m in rows
            if (not branch or m["source_branch"] == branch) and (not state or m["state"] == state)
        ]
        return self.paged(request, rows)

    def _mr_create(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        body = request.json() or {}
        source, target = body.get("source_branch"), body.get("target_branch")
        branches = repo.branches()
        if not body.get("title") or source not in branches or target not in branches:
            return FakeResponse(400, {"message": "source_branch, target_branch or title invalid"})
        with self.lock:
            mine = self.mrs.setdefault(repo.full_name, {})
            for existing in mine.values():
                if existing.get("fork"):
                    continue  # another project's branch of the same name is not a duplicate
                if existing["source_branch"] == source and existing["state"] == "opened":
                    message = f"Another open merge request already exists for this source branch: !{existing['iid']}"  # noqa: E501
                    return FakeResponse(409, {"message": [message]})
            iid = len(mine) + 1
            mine[iid] = {
                "iid": iid,
                "id": 90000 + iid,
                "title": body["title"],
                "description": body.get("description") or "",
                "source_branch": source,
                "target_branch": target,
                "state": "opened",
                "created_at": _now(),
            }
        return FakeResponse(201, self._mr_json(repo, mine[iid]))

    def _mr(self, repo: BareRepo, n: str) -> dict[str, Any] | None:
        return self.mrs.get(repo.full_name, {}).get(int(n))

    def fork_merge_request(self, repo: str, source_branch: str, description: str) -> int:
        """A merge request into ``repo`` from a fork's branch (a stranger's project, id
        ``FORK_PROJECT_ID``): its ``source_project_id`` is the fork's, as on GitLab."""
        with self.lock:
            mine = self.mrs.setdefault(repo, {})
            iid = len(mine) + 1
            mine[iid] = {
                "iid": iid,
                "id": 90000 + iid,
                "title": "From a fork",
                "description": description,
                "source_branch": source_branch,
                "target_branch": "main",
                "state": "opened",
                "created_at": _now(),
                "fork": True,
            }
        return iid

    def _mr_json(self, repo: BareRepo, mr: dict[str, Any]) -> dict[str, Any]:
        project = self._project_ids[repo.full_name]
        fork = bool(mr.get("fork"))
        return {
            **{k: v for k, v in mr.items() if k != "fork"},
            "project_id": project,
            "target_project_id": project,
            "source_project_id": FORK_PROJECT_ID if fork else project,
            "sha": "f" * 40 if fork else repo.branches().get(mr["source_branch"], ""),
            "web_url": f"{self.base_url}/{repo.full_name}/-/merge_requests/{mr['iid']}",
        }

    def _mr_get(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        mr = self._mr(repo, n)
        return FakeResponse(200, self._mr_json(repo, mr)) if mr else _missing("Merge Request")

    def _mr_update(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        mr = self._mr(repo, n)
        if mr is None:
            return _missing("Merge Request")
        body = request.json() or {}
        for key in ("description", "title", "state_event"):
            if key in body and key != "state_event":
                mr[key] = body[key]
        if body.get("state_event") == "close":
            mr["state"] = "closed"
        return FakeResponse(200, self._mr_json(repo, mr))

    # --- notes and discussions -----------------------------------------------------------------

    def user_id(self, username: str) -> int:
        """A stable id per username; the bot user is ``BOT_USER_ID``."""
        if username == self.bot_username:
            return BOT_USER_ID
        return 100 + sum(username.encode()) * 7 + len(username)

    def _user(self, request: FakeRequest) -> FakeResponse:
        """``GET /user``: the token's own user, the fake's bot."""
        user = {"id": BOT_USER_ID, "username": self.bot_username, "bot": True}
        return FakeResponse(200, user)

    def edit_note(self, repo: str, iid: int, note_id: int, body: str) -> None:
        """Someone (an admin, say) edits a note: its body and ``updated_at`` change."""
        with self.lock:
            for note in self.notes_of(repo, iid):
                if note["id"] == note_id:
                    note["body"] = body
                    note["updated_at"] = _later(note["created_at"])

    def _new_note(
        self, body: str, username: str, position: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        now = _now()
        note: dict[str, Any] = {
            "id": next(self._note_ids),
            "type": "DiffNote" if position else None,
            "body": body,
            "system": False,
            "author": {"id": self.user_id(username), "username": username},
            "created_at": now,
            "updated_at": now,
            "noteable_type": "MergeRequest",
        }
        if position:
            note["position"] = {"position_type": "text", **position}
        return note

    def _open_discussion(self, repo: str, iid: int, note: dict[str, Any], individual: bool) -> None:
        discussion = {"id": f"{note['id']:040x}", "individual_note": individual, "notes": [note]}
        with self.lock:
            self.discussions.setdefault((repo, iid), []).append(discussion)

    def add_note(self, repo: str, iid: int, body: str, username: str = "dana") -> int:
        """A person's general comment on the merge request."""
        note = self._new_note(body, username)
        self._open_discussion(repo, iid, note, individual=True)
        return int(note["id"])

    def add_diff_thread(
        self, repo: str, iid: int, path: str, line: int, body: str, username: str = "dana"
    ) -> int:
        """A person's comment on a line of the diff, opening a discussion."""
        note = self._new_note(
            body, username, {"new_path": path, "old_path": path, "new_line": line}
        )
        self._open_discussion(repo, iid, note, individual=False)
        return int(note["id"])

    def notes_of(self, repo: str, iid: int) -> list[dict[str, Any]]:
        return [n for d in self.discussions.get((repo, iid), []) for n in d["notes"]]

    def _notes(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        if self._mr(repo, n) is None:
            return _missing("Merge Request")
        return self.paged(request, self.notes_of(repo.full_name, int(n)))

    def _note_create(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        body = (request.json() or {}).get("body")
        if self._mr(repo, n) is None:
            return _missing("Merge Request")
        if not isinstance(body, str) or not body:
            return FakeResponse(400, {"message": "body is missing"})
        note = self._new_note(body, self.bot_username)
        self._open_discussion(repo.full_name, int(n), note, individual=True)
        return FakeResponse(201, note)

    def _discussion_list(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        if self._mr(repo, n) is None:
            return _missing("Merge Request")
        return self.paged(request, self.discussions.get((repo.full_name, int(n)), []))

    def _discussion_reply(
        self, request: FakeRequest, repo: BareRepo, n: str, d: str
    ) -> FakeResponse:
        body = (request.json() or {}).get("body")
        for discussion in self.discussions.get((repo.full_name, int(n)), []):
            if discussion["id"] == d and isinstance(body, str) and body:
                position = discussion["notes"][0].get("position")
                note = self._new_note(body, self.bot_username, position)
                with self.lock:
                    discussion["notes"].append(note)
                return FakeResponse(201, note)
        return _missing("Discussion")

    # --- pipelines and jobs -----------------------------------------------------------------

    def _pipeline_list(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        sha = request.arg("sha")
        ref = request.arg("ref")
        if not sha and ref:
            sha = repo.resolve(ref)
        if sha and repo.resolve(sha):
            self._ensure_pipeline(repo, repo.resolve(sha) or sha, ref)
        rows = [
            p
            for p in sorted(self.pipelines.values(), key=lambda p: -p["id"])
            if p["project_id"] == self._project_ids[repo.full_name]
            and (not sha or p["sha"].startswith(sha))
            and (not ref or p["ref"] == ref)
        ]
        return self.paged(request, [self._pipeline_json(p) for p in rows])

    def _ensure_pipeline(self, repo: BareRepo, sha: str, ref: str | None) -> None:
        with self.lock:
            key = (repo.full_name, sha)
            if key in self._pipeline_of:
                return
            pid = next(self._pipeline_ids)
            self._pipeline_of[key] = pid
            self.pipelines[pid] = {
                "id": pid,
                "iid": pid - 699,
                "project_id": self._project_ids[repo.full_name],
                "sha": sha,
                "ref": ref or next((b for b, s in repo.branches().items() if s == sha), sha),
                "repo": repo,
            }
        self.ci.ensure(repo, sha)

    def _runs(self, pipeline: dict[str, Any]) -> list[CheckRun]:
        return self.ci.ensure(pipeline["repo"], pipeline["sha"])

    def _pipeline_json(self, p: dict[str, Any]) -> dict[str, Any]:
        statuses = [self._job_status(r) for r in self._runs(p)]
        status = next(
            (s for s in ("running", "pending", "failed", "canceled") if s in statuses), "success"
        )
        out = {k: v for k, v in p.items() if k != "repo"}
        out["status"] = status
        out["web_url"] = f"{self.base_url}/{p['repo'].full_name}/-/pipelines/{p['id']}"
        return out

    @staticmethod
    def _job_status(run: CheckRun) -> str:
        if run.status != "completed":
            return _JOB_STATUS.get(run.status, "pending")
        return _JOB_CONCLUSION.get(str(run.conclusion), "failed")

    def _job_json(self, repo: BareRepo, run: CheckRun) -> dict[str, Any]:
        artifacts = []
        if run.annotations:
            artifacts.append(
                {"file_type": "codequality", "filename": f"{CODE_QUALITY_FILE}.gz",
                 "file_format": "gzip", "size": len(json.dumps(run.annotations))}
            )  # fmt: skip
        return {
            "id": run.id,
            "name": run.name,
            "stage": "test",
            "status": self._job_status(run),
            "allow_failure": False,
            "failure_reason": "script_failure" if self._job_status(run) == "failed" else None,
            "started_at": run.started_at,
            "finished_at": run.completed_at,
            "pipeline": {"sha": run.head_sha},
            "artifacts": artifacts,
            "web_url": f"{self.base_url}/{repo.full_name}/-/jobs/{run.id}",
        }

    def _jobs(self, request: FakeRequest, repo: BareRepo, id: str) -> FakeResponse:
        pipeline = self.pipelines.get(int(id))
        if pipeline is None or pipeline["repo"].full_name != repo.full_name:
            return _missing("Pipeline")
        self.ci.settle(pipeline["sha"])
        return self.paged(request, [self._job_json(repo, r) for r in self._runs(pipeline)])

    def _run(self, repo: BareRepo, id: str) -> CheckRun | None:
        run = self.ci.runs.get(int(id))
        return run if run is not None and run.repo == repo.full_name else None

    def _job(self, request: FakeRequest, repo: BareRepo, id: str) -> FakeResponse:
        run = self._run(repo, id)
        return FakeResponse(200, self._job_json(repo, run)) if run else _missing("Job")

    def _trace(self, request: FakeRequest, repo: BareRepo, id: str) -> FakeResponse:
        run = self._run(repo, id)
        if run is None:
            return _missing("Job")
        return FakeResponse(200, run.summary, content_type="text/plain; charset=utf-8")

    def _artifact(self, request: FakeRequest, repo: BareRepo, id: str, path: str) -> FakeResponse:
        run = self._run(repo, id)
        if run is None or path.strip("/") != CODE_QUALITY_FILE or not run.annotations:
            return _missing("File")
        return FakeResponse(200, json.dumps(code_quality_report(run.annotations)))


def _missing(what: str) -> FakeResponse:
    return FakeResponse(404, {"message": f"404 {what} Not Found"})
