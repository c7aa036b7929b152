"""GitHub REST as the work loop's ``Forge``: pull requests, CI, findings, comments.

Check runs are the CI jobs and their annotations the findings (``github_checks`` reads their
vocabulary). Review comments and issue comments are two REST id spaces; the port wants one,
so ids are ``review:<id>`` and ``issue:<id>`` (the keys the feedback phase has always stored,
so a PR already in flight is never answered twice). A review comment's thread is its root
comment's id, the one GitHub's replies endpoint takes; an issue comment is in the
conversation.

Built on ``HttpService`` but with GitHub's own rate-limit rules, because GitHub signals limits
with **403 as well as 429**: a 403/429 carrying ``retry-after`` waits that long; one with
``x-ratelimit-remaining: 0`` waits until ``x-ratelimit-reset``; one whose message mentions a
secondary rate limit waits at least 60 s. A plain 403 is a permission problem and is not
retried. Waits longer than ``MAX_RATE_LIMIT_RESET_WAIT_S`` surface as ``TransientError`` so
Dagster's retry policy, not a sleeping thread, takes the long wait. Lists follow the ``Link:
rel="next"`` header up to ``MAX_PAGES``.
"""

from __future__ import annotations

import base64
import time
from typing import Any, Unpack
from urllib.parse import quote

import httpx

from veranda_dagster.domain.core.bounds import (
    MAX_RATE_LIMIT_RESET_WAIT_S,
    MAX_VOCABULARY_FILE_BYTES,
    OUTPUT_TAIL_BYTES,
)
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.forge_port import CiFinding, CiJob, Comment, Comments, ForgePR
from veranda_dagster.forges.github.shapes import (
    check_run_id,
    ci_finding,
    ci_job,
    issue_comment,
    pull_request,
    review_comment,
)
from veranda_dagster.http.bounded import read_body
from veranda_dagster.http.client import (
    HttpAuthError,
    HttpSeams,
    HttpService,
    HttpStatusError,
    backoff_s,
)
from veranda_dagster.http.paging import Listing, Page, newest_first

API_VERSION = "2022-11-28"
ACCEPT = "application/vnd.github+json"
PER_PAGE = 100
MAX_PAGES = 10
"""Pages walked per list (1,000 items): more check runs or comments than that is not a PR."""
SECONDARY_WAIT_S = 60.0
"""GitHub's guidance for a secondary limit without ``retry-after``: wait at least a minute."""
LOG_TAIL_BYTES = OUTPUT_TAIL_BYTES * 4
"""Bytes of a job log kept: the failure is at the end; the phase cuts it further."""


def rate_limit_wait(response: httpx.Response, now: float) -> float | None:
    """Seconds to wait if ``response`` is a rate limit (primary or secondary), else ``None``."""
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    if headers.get("retry-after"):
        try:
            return max(0.0, float(headers["retry-after"]))
        except ValueError:
            return SECONDARY_WAIT_S
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
        try:
            return max(0.0, float(headers["x-ratelimit-reset"]) - now)
        except ValueError:
            return SECONDARY_WAIT_S
    if "secondary rate limit" in response.text.lower() or response.status_code == 429:
        return SECONDARY_WAIT_S
    return None


class GitHubClient(HttpService):
    service = "github"
    default_headers = {"Accept": ACCEPT, "X-GitHub-Api-Version": API_VERSION}
    auth_rejected = "github rejected the token (HTTP 401); check GITHUB_TOKEN"
    forbidden = "the token lacks permission for"  # a plain 403 (a limit is retried first)

    def __init__(self, base_url: str, token: str | None, **seams: Unpack[HttpSeams]) -> None:
        super().__init__(base_url, token, **seams)
        self._etags: dict[str, tuple[str, list[CiJob]]] = {}
        """Check-runs URL -> (ETag, jobs) of its last full answer, for conditional polls."""
        self.not_modified = 0
        """Polls answered ``304`` (free against the rate limit)."""
        self._own_id: int | None = None

    # --- transport policy: GitHub signals limits with 403 as well as 429 -------------------

    max_retry_wait_s = MAX_RATE_LIMIT_RESET_WAIT_S

    def retry_wait(self, response: httpx.Response, attempt: int) -> float | None:
        wait = rate_limit_wait(response, self._clock())
        if wait is None and response.status_code >= 500:
            wait = backoff_s(attempt)
        return wait

    def _pages(self, url: str, key: str | None = None, **params: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        next_url: str | None = url
        query: dict[str, Any] | None = {"per_page": PER_PAGE, **params}
        for _ in range(MAX_PAGES):
            if next_url is None:
                break
            response = self.request("GET", next_url, params=query)
            data = response.json()
            page = data.get(key) if key and isinstance(data, dict) else data
            if not isinstance(page, list):
                raise InputError(
                    f"github: {url} did not return a list{f' of {key}' if key else ''}"
                )
            items += [item for item in page if isinstance(item, dict)]
            next_url = response.links.get("next", {}).get("url")
            query = None  # the next link carries the query
        if next_url is not None:
            self.note_truncated(f"github {url}: more than {MAX_PAGES} pages; later ones not read")
        return items

    # --- pull requests ------------------------------------------------------------------------

    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None:
        """Our open PR from ``head_branch``: its head is a branch of ``repo`` itself. A fork
        (even one in the same org, whose head label reads the same) is someone else's."""
        owner = repo.split("/", 1)[0]
        pulls = self._pages(
            f"/repos/{repo_path(repo)}/pulls", head=f"{owner}:{head_branch}", state="open"
        )
        for pull in pulls:
            head = pull.get("head") or {}
            source = str((head.get("repo") or {}).get("full_name") or "")
            if head.get("ref") == head_branch and source.lower() == repo.lower():
                return pull_request(pull)  # a fork's PR of the same branch name is not ours
        return None

    def create_pull_request(
        self, repo: str, head: str, base: str, title: str, body: str
    ) -> tuple[int, str]:
        payload = {"title": title, "head": head, "base": base, "body": body, "draft": False}
        try:
            data = self.json("POST", f"/repos/{repo_path(repo)}/pulls", json=payload)
        except HttpStatusError as exc:
            existing = self.find_pull_request(repo, head) if exc.status == 422 else None
            if existing is None:
                raise
            return existing.number, existing.url
        return int(data["number"]), str(data["html_url"])

    def update_pull_request_body(self, repo: str, number: int, body: str) -> None:
        self.request("PATCH", f"/repos/{repo_path(repo)}/pulls/{number}", json={"body": body})

    # --- CI: check runs and their annotations -------------------------------------------------

    def list_ci_jobs(self, repo: str, sha: str) -> list[CiJob]:
        """The commit's latest check runs. The first page is a conditional request: GitHub
        answers ``304 Not Modified`` to a matching ``If-None-Match`` and does not count it
        against the hourly limit, so polling a running CI every few seconds costs nothing
        until something changes (then the page is read again, and any further pages)."""
        url = f"/repos/{repo_path(repo)}/commits/{sha}/check-runs"
        cached = self._etags.get(url)
        response = self.request(
            "GET",
            url,
            params={"per_page": PER_PAGE, "filter": "latest"},
            headers={"If-None-Match": cached[0]} if cached else {},
        )
        if response.status_code == 304 and cached:
            self.not_modified += 1
            return list(cached[1])
        data = response.json()
        page = data.get("check_runs") if isinstance(data, dict) else None
        if not isinstance(page, list):
            raise InputError(f"github: {url} did not return a list of check_runs")
        items = [item for item in page if isinstance(item, dict)]
        paged = next_url = response.links.get("next", {}).get("url")
        for _ in range(MAX_PAGES - 1):
            if not next_url:
                break
            more = self.request("GET", next_url)  # the next link carries the query
            data = more.json()
            items += [i for i in (data.get("check_runs") or []) if isinstance(i, dict)]
            next_url = more.links.get("next", {}).get("url")
        if next_url:
            self.note_truncated(f"github {url}: more than {MAX_PAGES} pages; later ones not read")
        jobs = [ci_job(r) for r in items]
        etag = response.headers.get("etag")
        if etag and not paged:  # one page's ETag cannot vouch for the others
            self._etags[url] = (etag, jobs)
        return jobs

    def ci_findings(self, repo: str, job: CiJob) -> list[CiFinding]:
        """The check run's annotations; the check's name is the tool that made them."""
        path = f"/repos/{repo_path(repo)}/check-runs/{check_run_id(job)}/annotations"
        found = (ci_finding(a, job.name) for a in self._pages(path))
        return [f for f in found if f is not None]

    def ci_job_report(self, repo: str, job: CiJob) -> str:
        """The check run's ``output`` title, summary and text."""
        data = self.json("GET", f"/repos/{repo_path(repo)}/check-runs/{check_run_id(job)}")
        output = (data.get("output") if isinstance(data, dict) else None) or {}
        parts = [output.get(k) for k in ("title", "summary", "text")]
        return "\n\n".join(p for p in parts if isinstance(p, str) and p)

    def ci_job_log_tail(self, repo: str, job: CiJob) -> str | None:
        """A GitHub Actions job's log (check run id = job id): a 302 to a short-lived URL,
        fetched *without* our token. ``None`` for checks that are not Actions jobs."""
        try:
            response = self.request(
                "GET",
                f"/repos/{repo_path(repo)}/actions/jobs/{check_run_id(job)}/logs",
                follow_redirects=False,
            )
        except HttpStatusError as exc:
            if exc.status in (404, 410):
                return None
            raise
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307) or not location:
            return response.content[-LOG_TAIL_BYTES:].decode("utf-8", errors="ignore")
        deadline = time.monotonic() + self.deadline_s
        with self._client.stream("GET", location) as log:  # pre-signed: our token stays home
            if log.status_code >= 400:
                return None
            tail = read_body(
                log, what="github job log", limit=LOG_TAIL_BYTES, deadline=deadline, keep="tail"
            )
        return tail.decode("utf-8", errors="ignore")

    # --- the org's repositories (the repo-detection catalog) --------------------------------

    def list_org_repositories(self, org: str) -> list[dict[str, Any]]:
        """``GET /orgs/{org}/repos``: every repository with its description, topics, language,
        ``archived`` and ``fork`` flags, paged up to ``MAX_PAGES``."""
        return self._pages(f"/orgs/{quote(org, safe='')}/repos", type="all")

    def get_repository(self, owner: str, name: str) -> dict[str, Any] | None:
        """``GET /repos/{owner}/{name}``, following a rename: GitHub answers an old name with
        301 to ``/repositories/{id}``, which is fetched only on this client's own origin.
        ``None`` when no repository has (or had) that name."""
        try:
            response = self.request(
                "GET", f"/repos/{repo_path(f'{owner}/{name}')}", follow_redirects=False
            )
            if response.status_code in (301, 302, 307, 308):
                location = httpx.URL(response.headers.get("location", ""))
                base = httpx.URL(self.base_url)
                if (location.scheme, location.host, location.port) != (
                    base.scheme,
                    base.host,
                    base.port,
                ):
                    raise InputError(f"github: rename of {owner}/{name} redirects off-origin")
                response = self.request("GET", str(location), follow_redirects=False)
        except HttpStatusError as exc:
            if exc.status == 404:
                return None
            raise
        data = response.json()
        return data if isinstance(data, dict) else None

    def read_repository_file(self, full_name: str, path: str) -> str | None:
        """One file's text on the default branch (``GET .../contents/{path}``), for the
        catalog's vocabulary; ``None`` when absent, not a file or over the vocabulary bound."""
        data = self._contents_json(full_name, path)
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if int(data.get("size") or 0) > MAX_VOCABULARY_FILE_BYTES:
            return None
        if data.get("encoding") != "base64":
            return None
        return base64.b64decode(data.get("content") or "").decode("utf-8", errors="replace")

    def list_repository_dir(self, full_name: str, path: str) -> list[str] | None:
        """A folder's entries on the default branch, sub-folders ending in ``/``."""
        data = self._contents_json(full_name, path)
        if not isinstance(data, list):
            return None
        return [
            str(e.get("name")) + ("/" if e.get("type") == "dir" else "")
            for e in data
            if isinstance(e, dict) and e.get("name")
        ]

    def _contents_json(self, full_name: str, path: str) -> Any:
        url = f"/repos/{repo_path(full_name)}/contents"
        if path.strip("/"):
            url += "/" + quote(path.strip("/"))
        try:
            return self.json("GET", url)
        except HttpStatusError as exc:
            if exc.status == 404:
                return None
            raise

    # --- comments -----------------------------------------------------------------------------

    def own_user_id(self) -> int:
        """Our account's user id, asked once: ``GET /user`` for a person's or machine user's
        token; an app's installation token may not call it (403), and GraphQL's ``viewer`` is
        then the app's bot user. Progress is read only from comments this id wrote."""
        if self._own_id is None:
            try:
                data = self.json("GET", "/user")
                found = data.get("id") if isinstance(data, dict) else None
            except HttpAuthError:
                query = {"query": "query { viewer { databaseId } }"}
                data = self.json("POST", graphql_url(self.base_url), json=query)
                viewer = ((data.get("data") or {}) if isinstance(data, dict) else {}).get("viewer")
                found = (viewer or {}).get("databaseId")
            if not isinstance(found, int) or isinstance(found, bool):
                raise InputError("github: could not learn our own user id (GET /user, viewer)")
            self._own_id = found
        return self._own_id

    def list_comments(self, repo: str, number: int) -> Comments:
        """Review comments, then the conversation's issue comments, each oldest first; each
        list read newest first past ``MAX_PAGES`` (``paging``), a cut named in ``truncated``."""
        base = f"/repos/{repo_path(repo)}"
        review = self._newest_first(f"{base}/pulls/{number}/comments")
        issue = self._newest_first(f"{base}/issues/{number}/comments")
        own = self.own_user_id()
        comments = [review_comment(c, own) for c in review.items]
        comments += [issue_comment(c, own) for c in issue.items]
        cuts = [c for c in (review.truncated, issue.truncated) if c]
        return Comments(comments, "; ".join(cuts) or None)

    def _newest_first(self, path: str) -> Listing:
        """A page-numbered list read so the newest items survive the page bound."""

        def read_page(page: int) -> Page:
            response = self.request("GET", path, params={"per_page": PER_PAGE, "page": page})
            items = response.json()
            if not isinstance(items, list):
                raise InputError(f"github: {path} did not return a list")
            last = response.links.get("last", {}).get("url")
            more = "next" in response.links
            total = _page_number(last) if last else (None if more else page)
            return [i for i in items if isinstance(i, dict)], total, more

        return newest_first(read_page, MAX_PAGES, f"github {path}")

    def comment(self, repo: str, number: int, body: str) -> str:
        data = self.json(
            "POST", f"/repos/{repo_path(repo)}/issues/{number}/comments", json={"body": body}
        )
        return f"issue:{int(data['id'])}"

    def reply(self, repo: str, number: int, to: Comment, body: str) -> str:
        """In ``to``'s review thread (GitHub replies to the thread's root comment), else a new
        comment in the conversation."""
        if to.thread is None:
            return self.comment(repo, number, body)
        if not to.thread.isdigit():
            raise InputError(f"github: review thread {to.thread!r} is not a comment id")
        data = self.json(
            "POST",
            f"/repos/{repo_path(repo)}/pulls/{number}/comments/{to.thread}/replies",
            json={"body": body},
        )
        return f"review:{int(data['id'])}"


def _page_number(url: str) -> int | None:
    """The ``page`` query parameter of a pagination link, if it is a number."""
    page = httpx.URL(url).params.get("page", "")
    return int(page) if page.isdigit() else None


def graphql_url(base_url: str) -> str:
    """GitHub's GraphQL endpoint beside its REST base: ``/graphql`` on api.github.com,
    ``/api/graphql`` on an Enterprise Server whose REST base ends in ``/api/v3``."""
    base = base_url.rstrip("/")
    return base.removesuffix("/v3") + "/graphql" if base.endswith("/api/v3") else base + "/graphql"


def repo_path(repo: str) -> str:
    """``org/name`` validated and quoted for a URL path."""
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise InputError(f"github: repo {repo!r} is not 'org/name'")
    return "/".join(quote(part, safe="") for part in repo.split("/"))
