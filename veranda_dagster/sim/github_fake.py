"""Fake GitHub REST API over real bare repositories (``<git_root>/<org>/<name>.git``).

Covers the subset the product uses, in the reference's shapes: repos and org repo lists,
contents, trees, branches and commits, code search with text matches (``git grep`` on the
default branch, see ``github_search``), and, in ``github_pulls``, pulls, comments, reviews and
check runs with annotations. Pagination follows ``page``/``per_page`` with a ``Link:
rel="next"`` header. With ``token`` set, any other bearer token is ``401 Bad credentials``.
"""

from __future__ import annotations

import base64
import itertools
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlencode

from veranda_dagster.sim.bare_repo import BareRepo, repos_under
from veranda_dagster.sim.fake_ci import CiMode, FakeCI
from veranda_dagster.sim.github_pulls import BOT_LOGIN, PullsAndChecks, not_found, user
from veranda_dagster.sim.github_search import search_code
from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse, paginate
from veranda_dagster.sim.human_pages import HumanPage, page_response

Handler = Callable[..., FakeResponse]
Route = tuple[str, re.Pattern[str], Handler]
DOC = "https://docs.github.com/rest"
PULL_PAGE = re.compile(r"/([\w.-]+/[\w.-]+)/pull/(\d+)")
"""A pull request's ``html_url`` path (the API's own paths start with ``/repos/``)."""
PUSH_POLL_S = 0.5
"""How often the fake looks for pushed PR heads to start CI on."""


def compile_routes(table: list[tuple[str, str, Handler]]) -> list[Route]:
    """``/repos/{o}/{r}/pulls/{n}`` templates to anchored patterns; ``{path}``/``{ref}`` may
    hold slashes (``{path}`` includes its leading one), ``{n}``/``{id}``/``{c}`` are numbers."""
    special = {"path": r"(?P<path>(?:/.*)?)", "ref": r"(?P<ref>.+)"}
    out = []
    for method, template, handler in table:

        def part(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in special:
                return special[name]
            return rf"(?P<{name}>\d+)" if name in ("n", "id", "c") else rf"(?P<{name}>[^/]+)"

        pattern = re.sub(
            r"\{(\w+)\}", part, re.escape(template).replace(r"\{", "{").replace(r"\}", "}")
        )
        out.append((method, re.compile(f"^{pattern}$"), handler))
    return out


class GitHubFake(PullsAndChecks, FakeHttpServer):
    name = "github"

    def __init__(
        self,
        git_root: str | Path,
        token: str | None = None,
        ci_mode: CiMode = "run",
        ci_command_timeout_s: float | None = None,
    ) -> None:
        super().__init__()
        self.git_root = Path(git_root)
        self.token = token
        self.ci = FakeCI(ci_mode, ci_command_timeout_s)
        self.pulls: dict[str, dict[int, dict[str, Any]]] = {}
        self.issue_comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.review_comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.reviews: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self._ids = itertools.count(1000)
        self._watching = threading.Event()
        self._routes = compile_routes(
            [
                ("GET", "/rate_limit", self._rate_limit),
                ("GET", "/user", self._user),
                ("GET", "/orgs/{org}/repos", self._org_repos),
                ("GET", "/search/code", self._search),
                ("GET", "/repos/{o}/{r}", self._repo_get),
                ("GET", "/repos/{o}/{r}/contents{path}", self._contents),
                ("GET", "/repos/{o}/{r}/git/trees/{ref}", self._tree),
                ("GET", "/repos/{o}/{r}/branches/{b}", self._branch),
                ("GET", "/repos/{o}/{r}/commits/{sha}", self._commit),
                ("POST", "/repos/{o}/{r}/pulls", self._pull_create),
                ("GET", "/repos/{o}/{r}/pulls", self._pull_list),
                ("GET", "/repos/{o}/{r}/pulls/{n}", self._pull_get),
                ("PATCH", "/repos/{o}/{r}/pulls/{n}", self._pull_patch),
                ("GET", "/repos/{o}/{r}/pulls/{n}/files", self._pull_files),
                ("GET", "/repos/{o}/{r}/pulls/{n}/comments", self._review_comments),
                ("POST", "/repos/{o}/{r}/pulls/{n}/comments", self._review_comment_add),
                ("POST", "/repos/{o}/{r}/pulls/{n}/comments/{c}/replies", self._review_reply),
                ("GET", "/repos/{o}/{r}/pulls/{n}/reviews", self._reviews),
                ("POST", "/repos/{o}/{r}/pulls/{n}/reviews", self._review_add),
                ("GET", "/repos/{o}/{r}/issues/{n}/comments", self._issue_comments),
                ("POST", "/repos/{o}/{r}/issues/{n}/comments", self._issue_comment_add),
                ("GET", "/repos/{o}/{r}/commits/{ref}/check-runs", self._check_runs),
                ("GET", "/repos/{o}/{r}/commits/{ref}/check-suites", self._check_suites),
                ("GET", "/repos/{o}/{r}/commits/{ref}/status", self._status),
                ("GET", "/repos/{o}/{r}/check-runs/{id}", self._check_run),
                ("GET", "/repos/{o}/{r}/check-runs/{id}/annotations", self._annotations),
                ("GET", "/repos/{o}/{r}/actions/jobs/{id}/logs", self._job_logs),
                ("GET", "/_logs/{id}", self._log_text),
            ]
        )

    # --- CI on push -----------------------------------------------------------------------------

    def start(self) -> GitHubFake:
        super().start()
        self._watching.clear()
        threading.Thread(target=self._watch_pushes, name="github-fake-push", daemon=True).start()
        return self

    def stop(self) -> None:
        self._watching.set()
        super().stop()

    def _watch_pushes(self) -> None:
        """CI starts when a PR's head moves, as on GitHub, not when someone first asks."""
        while not self._watching.wait(PUSH_POLL_S):
            with self.lock:
                open_heads = [
                    (name, pr["head"]["ref"])
                    for name, pulls in self.pulls.items()
                    for pr in pulls.values()
                    if pr["state"] == "open"
                ]
            for name, ref in open_heads:
                repo = self.repo(name)
                sha = repo.resolve(ref) if repo else None
                if repo and sha:
                    self.ci.ensure(repo, sha)

    # --- test/demo API --------------------------------------------------------------------------

    def repos(self) -> dict[str, BareRepo]:
        return repos_under(self.git_root)

    def repo(self, full_name: str) -> BareRepo | None:
        return self.repos().get(full_name)

    @property
    def clone_base(self) -> str:
        """Where the product clones from: the bare repositories as a local git base."""
        return str(self.git_root)

    def pull_request_rows(self) -> list[dict[str, str]]:
        """Every pull request as ``repo``, ``url``, ``title``, ``body``, ``branch``: the
        simulation's forge-neutral view (``SimForgeFake``)."""
        with self.lock:
            return [
                {
                    "repo": repo,
                    "url": pr["html_url"],
                    "title": pr["title"],
                    "body": pr["body"],
                    "branch": pr["head"]["ref"],
                }
                for repo, pulls in self.pulls.items()
                for pr in pulls.values()
            ]

    def all_pulls(self, full_name: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [
                self._pull_view(name, p)
                for name, pulls in self.pulls.items()
                if full_name in (None, name)
                for p in pulls.values()
            ]

    def human_comment(self, full_name: str, number: int, body: str, login: str = "octocat") -> int:
        """A human's PR conversation comment (for feedback tests); its id."""
        fields = {"body": body}
        added = self._add_comment(self.issue_comments, full_name, number, fields, login, "User")
        return int(added["id"])

    def human_review_comment(
        self, full_name: str, number: int, body: str, path: str, line: int, login: str = "octocat"
    ) -> None:
        fields = {"body": body, "path": path, "line": line, "side": "RIGHT"}
        self._add_comment(self.review_comments, full_name, number, fields, login, "User")

    def fault_body(self, status: int) -> Any:
        doc = "https://docs.github.com/rest"
        if status == 429:
            return {
                "message": "You have exceeded a secondary rate limit. Please wait a few minutes"
                " before you try again.",
                "documentation_url": doc,
            }
        if status == 401:
            return {"message": "Bad credentials", "documentation_url": doc, "status": "401"}
        if status == 403:
            return {
                "message": "API rate limit exceeded for installation ID 123.",
                "documentation_url": doc,
            }
        return {"message": "Server Error", "documentation_url": doc}

    # --- dispatch -------------------------------------------------------------------------------

    def handle(self, request: FakeRequest) -> FakeResponse:
        page = PULL_PAGE.fullmatch(request.path.rstrip("/"))
        if page and request.method in ("GET", "HEAD"):  # the html_url a person clicks
            return self._pull_page(page.group(1), int(page.group(2)))
        public = request.path.startswith("/_logs/")  # a pre-signed log URL: no GitHub auth
        if self.token is not None and not public and request.bearer() != self.token:
            return FakeResponse(401, self.fault_body(401))
        path = request.path.rstrip("/") or "/"
        for method, pattern, func in self._routes:
            match = pattern.match(path)
            if match and method == request.method:
                groups: dict[str, Any] = match.groupdict()
                if "o" in groups:
                    repo = self.repo(f"{groups.pop('o')}/{groups.pop('r')}")
                    if repo is None:
                        return not_found()
                    groups["repo"] = repo
                if func in (self._check_runs, self._check_suites):
                    self._settle_ci(groups["repo"], groups["ref"])
                with self.lock:
                    return func(request, **groups)
        return not_found()

    def _pull_page(self, full_name: str, number: int) -> FakeResponse:
        """The pull request's web page: title, state, branch, body and every comment."""
        with self.lock:
            pr = self.pulls.get(full_name, {}).get(number)
            if pr is None:
                return FakeResponse(404, f"no pull request {full_name}#{number}")
            comments = [
                (str(c.get("user", {}).get("login", "?")), str(c.get("body", "")))
                for store in (self.issue_comments, self.review_comments)
                for c in store.get((full_name, number), [])
            ]
            page = HumanPage(
                kind=f"Pull request {full_name}#{number}",
                title=str(pr["title"]),
                status="draft" if pr.get("draft") else str(pr["state"]),
                body=str(pr.get("body") or ""),
                fake="GitHub fake",
                comments=comments,
                facts=[("branch", f"{pr['head']['ref']} → {pr['base'].get('ref', '')}")],
            )
        return page_response(page)

    def _settle_ci(self, repo: BareRepo, ref: str) -> None:
        """A CI read waits (bounded, outside the lock) for that commit's running CI."""
        sha = repo.resolve(ref)
        if sha is not None:
            self.ci.ensure(repo, sha)
            self.ci.settle(sha)

    def _paged(self, request: FakeRequest, items: list[Any]) -> FakeResponse:
        page = int(request.arg("page", "1") or 1)
        per_page = int(request.arg("per_page", "30") or 30)
        chunk, more = paginate(items, page, per_page)
        last = max(1, -(-len(items) // max(1, min(per_page, 100))))
        query = {k: v[-1] for k, v in request.query.items()}

        def link(number: int, rel: str) -> str:
            where = urlencode(query | {"page": str(number)})
            return f'<{self.base_url}{request.path}?{where}>; rel="{rel}"'

        links = [link(page + 1, "next"), link(last, "last")] if more else []
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = {"link": ", ".join(links)} if links else {}
        return FakeResponse(200, chunk, headers)

    # --- repos, contents ------------------------------------------------------------------------

    def _repo_json(self, repo: BareRepo) -> dict[str, Any]:
        org, name = repo.full_name.split("/")
        return {
            "id": abs(hash(repo.full_name)) % 10**8,
            "name": name,
            "full_name": repo.full_name,
            "owner": {"login": org, "type": "Organization"},
            "private": True,
            "archived": False,
            "description": f"{name} (simulated)",
            "default_branch": repo.default_branch(),
            "clone_url": str(repo.path),
            "html_url": f"{self.base_url}/{repo.full_name}",
            "permissions": {"admin": False, "push": True, "pull": True},
        }

    def _user(self, request: FakeRequest) -> FakeResponse:
        """``GET /user``: the token's own account, the app's bot user."""
        return FakeResponse(200, user(BOT_LOGIN, "Bot"))

    def _rate_limit(self, request: FakeRequest) -> FakeResponse:
        reset = int(time.time()) + 3600
        res = {
            k: {"limit": n, "used": 0, "remaining": n, "reset": reset}
            for k, n in (("core", 5000), ("search", 30), ("code_search", 10), ("graphql", 5000))
        }
        return FakeResponse(200, {"resources": res, "rate": res["core"]})

    def _org_repos(self, request: FakeRequest, org: str) -> FakeResponse:
        items = [self._repo_json(r) for n, r in self.repos().items() if n.split("/")[0] == org]
        if not items and not (self.git_root / org).is_dir():
            return not_found()
        return self._paged(request, items)

    def _repo_get(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        return FakeResponse(200, self._repo_json(repo))

    def _contents(self, request: FakeRequest, repo: BareRepo, path: str) -> FakeResponse:
        path = unquote(path).strip("/")
        ref = request.arg("ref") or repo.default_branch()
        sha = repo.resolve(ref)
        entry = repo.entry(sha, path) if sha else None
        if sha is None or entry is None:
            return not_found()
        kind, obj = entry
        url = f"{self.base_url}/repos/{repo.full_name}/contents"
        if kind == "tree":
            rows = [
                {
                    "type": "dir" if t == "tree" else "file",
                    "name": n,
                    "path": f"{path.strip('/')}/{n}".lstrip("/"),
                    "sha": s,
                    "size": size,
                    "url": f"{url}/{path.strip('/')}/{n}".replace("//", "/"),
                }
                for n, t, s, size in repo.list_dir(sha, path)
            ]
            return FakeResponse(200, rows)
        raw = repo.blob(obj)
        if "raw" in request.headers.get("accept", ""):
            return FakeResponse(200, raw, content_type="application/vnd.github.raw")
        encoded = base64.b64encode(raw).decode()
        wrapped = "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60)) + "\n"
        return FakeResponse(
            200,
            {
                "type": "file",
                "encoding": "base64",
                "size": len(raw),
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "sha": obj,
                "content": wrapped,
                "url": f"{url}/{path}",
                "html_url": f"{self.base_url}/{repo.full_name}/blob/{sha}/{path}",
            },
        )

    def _tree(self, request: FakeRequest, repo: BareRepo, ref: str) -> FakeResponse:
        sha = repo.resolve(ref)
        if sha is None:
            return not_found()
        rows = repo.tree(sha, recursive=request.arg("recursive") is not None)
        return FakeResponse(200, {"sha": sha, "tree": rows, "truncated": False})

    def _branch(self, request: FakeRequest, repo: BareRepo, b: str) -> FakeResponse:
        sha = repo.branches().get(b)
        if sha is None:
            return not_found()
        return FakeResponse(
            200, {"name": b, "commit": {"sha": sha}, "protected": b == repo.default_branch()}
        )

    def _commit(self, request: FakeRequest, repo: BareRepo, sha: str) -> FakeResponse:
        full = repo.resolve(sha)
        if full is None:
            return FakeResponse(
                422, {"message": f"No commit found for SHA: {sha}", "documentation_url": DOC}
            )
        if "vnd.github.sha" in request.headers.get("accept", ""):
            return FakeResponse(200, full, content_type="application/vnd.github.sha")
        message = repo.git("log", "-1", "--format=%B", full).strip()
        url = f"{self.base_url}/repos/{repo.full_name}/commits/{full}"
        return FakeResponse(200, {"sha": full, "url": url, "commit": {"message": message}})

    def _search(self, request: FakeRequest) -> FakeResponse:
        text_match = "text-match" in request.headers.get("accept", "")
        status, body = search_code(self.repos(), request.arg("q") or "", text_match, self.base_url)
        if status != 200:
            return FakeResponse(status, body)
        return self._paged_search(request, body)

    def _paged_search(self, request: FakeRequest, body: dict[str, Any]) -> FakeResponse:
        page = int(request.arg("page", "1") or 1)
        per_page = int(request.arg("per_page", "30") or 30)
        chunk, _ = paginate(body["items"], page, per_page)
        return FakeResponse(200, {**body, "items": chunk})
