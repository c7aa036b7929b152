"""Pull requests, comments, reviews and CI for the GitHub fake (mixed into ``GitHubFake``).

Pull request head shas are read live from the bare repo, so a ``git push`` to it is a new head;
CI (``FakeCI``) starts for a head the first time anything asks about it (PR creation, check
runs). Creating a second open PR for a head is the real 422 "A pull request already exists".
"""

from __future__ import annotations

import calendar
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from veranda_dagster.sim.bare_repo import BareRepo
from veranda_dagster.sim.fake_ci import FakeCI
from veranda_dagster.sim.http_fake import FakeRequest, FakeResponse

BOT_LOGIN = "veranda-bot[bot]"
BOT_USER_ID = 41_000_001
"""The id GitHub gives the app's bot user; ``GET /user`` with the fake's token names it."""


def user(login: str, kind: str) -> dict[str, Any]:
    """A ``user`` object with a stable id per login (the bot's is ``BOT_USER_ID``)."""
    uid = BOT_USER_ID if login == BOT_LOGIN else 1_000 + sum(login.encode()) * 7 + len(login)
    return {"login": login, "id": uid, "type": kind}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _later(stamp: str) -> str:
    """A second after ``stamp`` (an edit is always later than the creation)."""
    at = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at + 1))


def not_found() -> FakeResponse:
    return FakeResponse(
        404,
        {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest",
            "status": "404",
        },
    )


def _invalid(resource: str, message: str) -> FakeResponse:
    error = {"resource": resource, "code": "custom", "message": message}
    return FakeResponse(
        422,
        {
            "message": "Validation Failed",
            "errors": [error],
            "documentation_url": "https://docs.github.com/rest",
        },
    )


class PullsAndChecks:
    """Needs from the host: ``repo()``, ``pulls``, the comment stores, ``ci``, ``_ids``,
    ``_paged()``, ``lock`` and ``base_url`` (declared here, so the mixin type-checks alone)."""

    ci: FakeCI
    pulls: dict[str, dict[int, dict[str, Any]]]
    issue_comments: dict[tuple[str, int], list[dict[str, Any]]]
    review_comments: dict[tuple[str, int], list[dict[str, Any]]]
    reviews: dict[tuple[str, int], list[dict[str, Any]]]
    _ids: Iterator[int]
    lock: threading.RLock

    if TYPE_CHECKING:

        @property
        def base_url(self) -> str: ...

        def repo(self, full_name: str) -> BareRepo | None: ...

        def _paged(self, request: FakeRequest, items: list[Any]) -> FakeResponse: ...

    # --- pulls ----------------------------------------------------------------------------------

    def _pull_view(self, full_name: str, pr: dict[str, Any]) -> dict[str, Any]:
        repo = self.repo(full_name)
        own = pr["head"].get("repo", {}).get("full_name") == full_name
        head_sha = repo.resolve(pr["head"]["ref"]) if repo and own else None
        base_sha = repo.resolve(pr["base"]["ref"]) if repo else None
        view = {
            **pr,
            "head": {**pr["head"], "sha": head_sha or pr["head"]["sha"]},
            "base": {**pr["base"], "sha": base_sha or pr["base"].get("sha")},
        }
        view["merged"] = False
        return view

    def _pull_create(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        data = request.json()
        if not isinstance(data, dict) or not data.get("head") or not data.get("base"):
            return _invalid("PullRequest", "head and base are required")
        head = str(data["head"]).split(":", 1)[-1]
        base = str(data["base"])
        branches = repo.branches()
        if head not in branches:
            return _invalid("PullRequest", f"head {head!r} does not exist")
        if base not in branches:
            return _invalid("PullRequest", f"base {base!r} does not exist")
        pulls = self.pulls.setdefault(repo.full_name, {})
        org = repo.full_name.split("/")[0]
        if any(
            p["head"]["ref"] == head
            and p["state"] == "open"
            and p["head"]["repo"]["full_name"] == repo.full_name  # a fork's branch is its own
            for p in pulls.values()
        ):
            return _invalid("PullRequest", f"A pull request already exists for {org}:{head}.")
        if branches[head] == branches[base]:
            return _invalid("PullRequest", f"No commits between {base} and {head}")
        number = 1 + max([0, *pulls.keys()], default=0)
        url = f"{self.base_url}/{repo.full_name}/pull/{number}"
        pr: dict[str, Any] = {
            "id": next(self._ids),
            "number": number,
            "state": "open",
            "draft": bool(data.get("draft")),
            "title": str(data.get("title") or head),
            "body": data.get("body") or "",
            "html_url": url,
            "url": f"{self.base_url}/repos/{repo.full_name}/pulls/{number}",
            "head": {
                "ref": head,
                "sha": branches[head],
                "label": f"{org}:{head}",
                "repo": {"full_name": repo.full_name},
            },
            "base": {
                "ref": base,
                "sha": branches[base],
                "label": f"{org}:{base}",
                "repo": {"full_name": repo.full_name},
            },
            "user": user(BOT_LOGIN, "Bot"),
            "created_at": _now(),
            "updated_at": _now(),
        }
        pulls[number] = pr
        self.ci.ensure(repo, branches[head])
        view = self._pull_view(repo.full_name, pr)
        return FakeResponse(201, view, {"location": pr["url"]})

    def fork_pull_request(self, full_name: str, fork: str, branch: str, body: str) -> int:
        """A pull request into ``full_name`` from ``fork``'s branch (a stranger's copy; in the
        same org when ``fork`` is, so its head label is the org's): ``head.repo`` is the fork."""
        with self.lock:
            pulls = self.pulls.setdefault(full_name, {})
            number = 1 + max([0, *pulls.keys()], default=0)
            owner = fork.split("/")[0]
            pulls[number] = {
                "id": next(self._ids),
                "number": number,
                "state": "open",
                "draft": False,
                "title": "From a fork",
                "body": body,
                "html_url": f"{self.base_url}/{full_name}/pull/{number}",
                "url": f"{self.base_url}/repos/{full_name}/pulls/{number}",
                "head": {
                    "ref": branch,
                    "sha": "f" * 40,
                    "label": f"{owner}:{branch}",
                    "repo": {"full_name": fork},
                },
                "base": {"ref": "main", "label": f"{owner}:main", "repo": {"full_name": full_name}},
                "user": user("mallory", "User"),
                "created_at": _now(),
                "updated_at": _now(),
            }
            return number

    def edit_comment(self, full_name: str, number: int, comment_id: int, body: str) -> None:
        """Someone else (a maintainer may) edits a comment: its body and ``updated_at``."""
        with self.lock:
            for store in (self.issue_comments, self.review_comments):
                for c in store.get((full_name, number), []):
                    if c["id"] == comment_id:
                        c["body"] = body
                        c["updated_at"] = _later(c["created_at"])

    def _pull_list(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        state = request.arg("state", "open")
        head = request.arg("head")
        base = request.arg("base")
        rows = []
        for pr in self.pulls.get(repo.full_name, {}).values():
            if state != "all" and pr["state"] != state:
                continue
            if head and pr["head"]["label"] != head and pr["head"]["ref"] != head:
                continue
            if base and pr["base"]["ref"] != base:
                continue
            rows.append(self._pull_view(repo.full_name, pr))
        return self._paged(request, rows)

    def _pull(self, repo: BareRepo, n: str) -> dict[str, Any] | None:
        return self.pulls.get(repo.full_name, {}).get(int(n))

    def _pull_get(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        pr = self._pull(repo, n)
        return FakeResponse(200, self._pull_view(repo.full_name, pr)) if pr else not_found()

    def _pull_patch(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        pr = self._pull(repo, n)
        data = request.json()
        if pr is None:
            return not_found()
        if not isinstance(data, dict):
            return _invalid("PullRequest", "body must be a JSON object")
        for key in ("title", "body"):
            if key in data:
                pr[key] = data[key]
        if data.get("state") in ("open", "closed"):
            pr["state"] = data["state"]
        pr["updated_at"] = _now()
        return FakeResponse(200, self._pull_view(repo.full_name, pr))

    def _pull_files(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        pr = self._pull(repo, n)
        if pr is None:
            return not_found()
        view = self._pull_view(repo.full_name, pr)
        return self._paged(request, repo.diff_files(view["base"]["sha"], view["head"]["sha"]))

    # --- comments and reviews -------------------------------------------------------------------

    def _add_comment(
        self,
        store: dict[tuple[str, int], list[dict[str, Any]]],
        full_name: str,
        number: int,
        fields: dict[str, Any],
        login: str,
        kind: str,
    ) -> dict[str, Any]:
        with self.lock:
            cid = next(self._ids)
            now = _now()  # one stamp: an unedited comment's two times are equal on GitHub
            comment = {
                "id": cid,
                **fields,
                "user": user(login, kind),
                "created_at": now,
                "updated_at": now,
                "author_association": "NONE" if kind == "Bot" else "COLLABORATOR",
                "html_url": f"{self.base_url}/{full_name}/pull/{number}#comment-{cid}",
            }
            store.setdefault((full_name, number), []).append(comment)
            return comment

    def _listing(self, request: FakeRequest, rows: list[dict[str, Any]]) -> FakeResponse:
        since = request.arg("since")
        if since:
            rows = [r for r in rows if r["updated_at"] > since]
        return self._paged(request, rows)

    def _issue_comments(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        if self._pull(repo, n) is None:
            return not_found()
        return self._listing(request, self.issue_comments.get((repo.full_name, int(n)), []))

    def _issue_comment_add(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        data = request.json()
        if self._pull(repo, n) is None:
            return not_found()
        if not isinstance(data, dict) or not data.get("body"):
            return _invalid("IssueComment", "body is required")
        c = self._add_comment(
            self.issue_comments, repo.full_name, int(n), {"body": data["body"]}, BOT_LOGIN, "Bot"
        )
        return FakeResponse(201, c)

    def _review_comments(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        if self._pull(repo, n) is None:
            return not_found()
        return self._listing(request, self.review_comments.get((repo.full_name, int(n)), []))

    def _review_comment_add(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        data = request.json()
        pr = self._pull(repo, n)
        if pr is None:
            return not_found()
        if not isinstance(data, dict) or not data.get("body"):
            return _invalid("PullRequestReviewComment", "body is required")
        fields = {
            k: data.get(k) for k in ("body", "path", "line", "side", "in_reply_to_id", "commit_id")
        }
        c = self._add_comment(
            self.review_comments, repo.full_name, int(n), fields, BOT_LOGIN, "Bot"
        )
        return FakeResponse(201, c)

    def _review_reply(self, request: FakeRequest, repo: BareRepo, n: str, c: str) -> FakeResponse:
        data = request.json()
        thread = self.review_comments.get((repo.full_name, int(n)), [])
        parent = next((x for x in thread if x["id"] == int(c)), None)
        if parent is None:
            return not_found()
        if not isinstance(data, dict) or not data.get("body"):
            return _invalid("PullRequestReviewComment", "body is required")
        fields = {
            "body": data["body"],
            "path": parent.get("path"),
            "line": parent.get("line"),
            "side": parent.get("side"),
            "in_reply_to_id": parent["id"],
        }
        reply = self._add_comment(
            self.review_comments, repo.full_name, int(n), fields, BOT_LOGIN, "Bot"
        )
        return FakeResponse(201, reply)

    def _reviews(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        if self._pull(repo, n) is None:
            return not_found()
        return self._paged(request, self.reviews.get((repo.full_name, int(n)), []))

    def _review_add(self, request: FakeRequest, repo: BareRepo, n: str) -> FakeResponse:
        data = request.json() or {}
        pr = self._pull(repo, n)
        if pr is None or not isinstance(data, dict):
            return not_found()
        event = str(data.get("event") or "COMMENT").upper()
        state = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}.get(
            event, "COMMENTED"
        )
        review = {
            "id": next(self._ids),
            "user": user(BOT_LOGIN, "Bot"),
            "state": state,
            "body": data.get("body") or "",
            "commit_id": self._pull_view(repo.full_name, pr)["head"]["sha"],
            "submitted_at": _now(),
        }
        self.reviews.setdefault((repo.full_name, int(n)), []).append(review)
        return FakeResponse(200, review)

    # --- CI ---------------------------------------------------------------------------------------

    def _check_runs(self, request: FakeRequest, repo: BareRepo, ref: str) -> FakeResponse:
        sha = repo.resolve(ref)
        if sha is None:
            return _invalid("Commit", f"No commit found for SHA: {ref}")
        runs = [r.as_json(self.base_url) for r in self.ci.ensure(repo, sha)]
        name = request.arg("check_name")
        runs = [r for r in runs if not name or r["name"] == name]
        body = {"total_count": len(runs), "check_runs": runs}
        etag = '"' + hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest() + '"'
        if request.headers.get("if-none-match") == etag:  # GitHub's conditional request
            return FakeResponse(304, None, headers={"ETag": etag})
        return FakeResponse(200, body, headers={"ETag": etag})

    def _check_suites(self, request: FakeRequest, repo: BareRepo, ref: str) -> FakeResponse:
        sha = repo.resolve(ref)
        if sha is None:
            return not_found()
        runs = self.ci.ensure(repo, sha)
        done = all(r.status == "completed" for r in runs)
        conclusions = {r.conclusion for r in runs}
        conclusion = None if not done else ("success" if conclusions == {"success"} else "failure")
        suite = {
            "id": runs[0].id // 10,
            "head_sha": sha,
            "status": "completed" if done else "in_progress",
            "conclusion": conclusion,
            "app": {"slug": "github-actions"},
            "latest_check_runs_count": len(runs),
        }
        return FakeResponse(200, {"total_count": 1, "check_suites": [suite]})

    def _status(self, request: FakeRequest, repo: BareRepo, ref: str) -> FakeResponse:
        sha = repo.resolve(ref)
        if sha is None:
            return not_found()
        return FakeResponse(200, {"state": "pending", "sha": sha, "total_count": 0, "statuses": []})

    def _check_run(self, request: FakeRequest, repo: BareRepo, id: str) -> FakeResponse:
        run = self.ci.runs.get(int(id))
        if run is None or run.repo != repo.full_name:
            return not_found()
        return FakeResponse(200, run.as_json(self.base_url))

    def _annotations(self, request: FakeRequest, repo: BareRepo, id: str) -> FakeResponse:
        run = self.ci.runs.get(int(id))
        if run is None or run.repo != repo.full_name:
            return not_found()
        return self._paged(request, list(run.annotations))

    def _job_logs(self, request: FakeRequest, repo: BareRepo, id: str) -> FakeResponse:
        """Actions job logs are a 302 to a short-lived URL fetched without GitHub auth."""
        run = self.ci.runs.get(int(id))
        if run is None or run.repo != repo.full_name:
            return not_found()
        return FakeResponse(302, None, {"location": f"{self.base_url}/_logs/{run.id}"})

    def _log_text(self, request: FakeRequest, id: str) -> FakeResponse:
        run = self.ci.runs.get(int(id))
        if run is None:
            return not_found()
        return FakeResponse(200, run.summary, content_type="text/plain; charset=utf-8")
