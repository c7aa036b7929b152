"""Fake GitLab (REST v4 and git over https) over real bare repositories, on 127.0.0.1.

Projects are the bare repositories under ``git_root`` at any depth (``acme/platform/billing.git``
is project ``acme/platform/billing``, in subgroup ``acme/platform``), numbered in path order.
The API answers in the documented shapes for the subset the product uses: projects by id or
URL-encoded path (an old path after ``rename`` answers with the project at its new path, as
GitLab's redirect routes do), group projects with ``include_subgroups``, branches, raw files,
blob search (``git grep`` on the ref, snippets with ``startline``), and in ``gitlab_mrs`` merge
requests, notes, discussions, pipelines and jobs run by ``FakeCI``. Lists page by
``page``/``per_page`` with ``x-next-page``. Any path ending in ``.git/...`` is git's smart HTTP
protocol (``git http-backend``), Basic auth whose password is the token, any username (GitLab
wants ``oauth2`` for OAuth tokens and accepts anything for personal ones).

With ``token`` set, a request without it is ``401 {"message": "401 Unauthorized"}``.
"""

from __future__ import annotations

import base64
import itertools
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from veranda_dagster.sim.bare_repo import BareRepo
from veranda_dagster.sim.fake_ci import CiMode, FakeCI
from veranda_dagster.sim.git_http import git_http_exchange
from veranda_dagster.sim.github_fake import compile_routes
from veranda_dagster.sim.gitlab_mrs import MergeRequestsAndPipelines
from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse, paginate
from veranda_dagster.sim.human_pages import HumanPage, page_response

API = "/api/v4"
SNIPPET_CONTEXT = 2
"""Lines either side of a match in a blob-search snippet."""

MR_PAGE = re.compile(r"/([\w.-]+(?:/[\w.-]+)+)/-/merge_requests/(\d+)")
"""A merge request's ``web_url`` path (the API's own paths start with ``/api/v4/``)."""


def projects_under(root: Path) -> dict[str, BareRepo]:
    """Every ``<group>/[<subgroup>/...]<name>.git`` under ``root``, keyed by its full path."""
    found: dict[str, BareRepo] = {}
    if root.is_dir():
        for bare in sorted(root.rglob("*.git")):
            if bare.is_dir() and (bare / "HEAD").exists():
                full = bare.relative_to(root).as_posix().removesuffix(".git")
                if "/" in full:
                    found[full] = BareRepo(bare, full)
    return found


def not_found(what: str = "Project") -> FakeResponse:
    return FakeResponse(404, {"message": f"404 {what} Not Found"})


class GitLabFake(MergeRequestsAndPipelines, FakeHttpServer):
    name = "gitlab"

    def __init__(
        self,
        git_root: str | Path,
        token: str | None = None,
        ci_mode: CiMode = "run",
        ci_command_timeout_s: float | None = None,
        bot_username: str = "project_1_bot_veranda",
    ) -> None:
        super().__init__()
        self.git_root = Path(git_root)
        self.token = token
        self.bot_username = bot_username
        self.ci = FakeCI(ci_mode, ci_command_timeout_s)
        self.redirects: dict[str, str] = {}
        self.archived: set[str] = set()
        """Projects archived with ``archive``: listed as such, left out by ``archived=false``."""
        self._ids = itertools.count(1000)
        self._project_ids: dict[str, int] = {}
        self.init_merge_requests()
        p = "{p}"
        self._routes = compile_routes(
            [
                ("GET", f"{API}/projects/{p}", self._project),
                ("GET", f"{API}/groups/{{g}}/projects", self._group_projects),
                ("GET", f"{API}/projects/{p}/repository/branches/{{b}}", self._branch),
                ("GET", f"{API}/projects/{p}/repository/files/{{f}}/raw", self._raw_file),
                ("GET", f"{API}/projects/{p}/repository/tree", self._tree),
                ("GET", f"{API}/projects/{p}/search", self._search),
                *self.merge_request_routes(p),
            ]
        )

    @property
    def clone_base(self) -> str:
        """Where the product clones from: the repositories served over smart HTTP."""
        return self.base_url

    def pull_request_rows(self) -> list[dict[str, str]]:
        """Every merge request as ``repo``, ``url``, ``title``, ``body``, ``branch``: the
        simulation's forge-neutral view (``SimForgeFake``)."""
        with self.lock:
            return [
                {
                    "repo": repo,
                    "url": f"{self.base_url}/{repo}/-/merge_requests/{iid}",
                    "title": mr["title"],
                    "body": mr["description"],
                    "branch": mr["source_branch"],
                }
                for repo, mrs in self.mrs.items()
                for iid, mr in mrs.items()
            ]

    # --- projects ----------------------------------------------------------------------------

    def projects(self) -> dict[str, BareRepo]:
        found = projects_under(self.git_root)
        for path in found:
            if path not in self._project_ids:
                self._project_ids[path] = next(self._ids) - 999
        return found

    def rename(self, old: str, new: str) -> None:
        """Move project ``old`` to ``new``; the old path keeps answering through a redirect
        route, as on GitLab, so a stale catalog entry still finds the project."""
        src, dst = self.git_root / f"{old}.git", self.git_root / f"{new}.git"
        dst.parent.mkdir(parents=True, exist_ok=True)
        src.rename(dst)
        with self.lock:
            self._project_ids[new] = self._project_ids.pop(old, next(self._ids) - 999)
            self.redirects[old] = new

    def archive(self, path: str) -> None:
        with self.lock:
            self.archived.add(path)

    def lookup(self, ref: str) -> BareRepo | None:
        """A project by numeric id or (URL-decoded) full path, following renames."""
        projects = self.projects()
        ref = unquote(ref)
        if ref.isdigit():
            return next(
                (
                    projects[p]
                    for p, i in self._project_ids.items()
                    if i == int(ref) and p in projects
                ),
                None,
            )
        for _ in range(len(self.redirects) + 1):
            if ref in projects:
                return projects[ref]
            ref = self.redirects.get(ref, "")
        return None

    def project_json(self, repo: BareRepo) -> dict[str, Any]:
        path = repo.full_name
        namespace, _, name = path.rpartition("/")
        return {
            "id": self._project_ids[path],
            "name": name,
            "path": name,
            "path_with_namespace": path,
            "description": _description(repo),
            "default_branch": repo.default_branch(),
            "topics": [],
            "archived": path in self.archived,
            "visibility": "private",
            "web_url": f"{self.base_url}/{path}",
            "http_url_to_repo": f"{self.base_url}/{path}.git",
            "namespace": {"full_path": namespace, "path": namespace.rsplit("/", 1)[-1]},
        }

    def _project(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        return FakeResponse(200, self.project_json(repo))

    def _group_projects(self, request: FakeRequest, g: str) -> FakeResponse:
        group = unquote(g).strip("/")
        deep = request.arg("include_subgroups") == "true"
        live_only = request.arg("archived") == "false"
        rows = [
            self.project_json(repo)
            for path, repo in self.projects().items()
            if path.startswith(group + "/")
            and (deep or path.count("/") == group.count("/") + 1)
            and not (live_only and path in self.archived)
        ]
        if not rows and not any(p.startswith(group + "/") for p in self.projects()):
            return not_found("Group")
        return self.paged(request, rows)

    def paged(self, request: FakeRequest, rows: list[Any]) -> FakeResponse:
        page = int(request.arg("page") or 1)
        items, more = paginate(rows, page, int(request.arg("per_page") or 20))
        headers = {"x-page": str(page), "x-next-page": str(page + 1) if more else ""}
        headers["x-total"] = str(len(rows))
        per_page = max(1, min(int(request.arg("per_page") or 20), 100))
        headers["x-total-pages"] = str(max(1, -(-len(rows) // per_page)))
        return FakeResponse(200, items, headers)

    # --- repository --------------------------------------------------------------------------

    def _branch(self, request: FakeRequest, repo: BareRepo, b: str) -> FakeResponse:
        branch = unquote(b)
        sha = repo.branches().get(branch)
        if sha is None:
            return not_found("Branch")
        return FakeResponse(200, {"name": branch, "commit": {"id": sha, "short_id": sha[:8]}})

    def _raw_file(self, request: FakeRequest, repo: BareRepo, f: str) -> FakeResponse:
        ref = request.arg("ref") or repo.default_branch()
        entry = repo.entry(ref, unquote(f))
        if entry is None or entry[0] != "blob":
            return not_found("File")
        return FakeResponse(200, repo.blob(entry[1]), content_type="text/plain; charset=utf-8")

    def _tree(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        """One folder's entries (``path``, default the root) on ``ref`` or the default branch."""
        ref = request.arg("ref") or repo.default_branch()
        path = (request.arg("path") or "").strip("/")
        entry = repo.entry(ref, path)
        if entry is None or entry[0] != "tree":
            return not_found("Tree")
        rows = [
            {"id": sha, "name": name, "type": kind, "path": f"{path}/{name}".lstrip("/")}
            for name, kind, sha, _ in repo.list_dir(ref, path)
        ]
        return FakeResponse(200, rows)

    def _search(self, request: FakeRequest, repo: BareRepo) -> FakeResponse:
        if request.arg("scope") != "blobs":
            return FakeResponse(400, {"error": "scope does not have a valid value"})
        term = (request.arg("search") or "").strip()
        if not term:
            return FakeResponse(400, {"error": "search is missing"})
        ref = request.arg("ref") or repo.default_branch()
        out = repo.git("grep", "-n", "-I", "-i", "-F", "--full-name", "-e", term, ref, check=False)
        rows: list[dict[str, Any]] = []
        for line in out.splitlines():
            _, rest = line.split(":", 1)
            path, number, _ = rest.split(":", 2)
            rows.append(self._snippet(repo, ref, path, int(number)))
        return self.paged(request, rows)

    def _snippet(self, repo: BareRepo, ref: str, path: str, line: int) -> dict[str, Any]:
        entry = repo.entry(ref, path)
        lines = repo.blob(entry[1]).decode("utf-8", "replace").split("\n") if entry else []
        start = max(1, line - SNIPPET_CONTEXT)
        data = "\n".join(lines[start - 1 : line + SNIPPET_CONTEXT])
        return {
            "basename": path.rsplit(".", 1)[0],
            "data": data,
            "path": path,
            "filename": path,
            "id": None,
            "ref": ref,
            "startline": start,
            "project_id": self._project_ids[repo.full_name],
        }

    # --- dispatch ----------------------------------------------------------------------------

    def fault_body(self, status: int) -> Any:
        return {"message": f"{status} injected"}

    def _authorized(self, request: FakeRequest) -> bool:
        if not self.token:
            return True
        if request.headers.get("private-token") == self.token:
            return True
        value = request.headers.get("authorization", "")
        scheme, _, rest = value.partition(" ")
        if scheme.lower() == "basic":
            try:
                return base64.b64decode(rest).decode().partition(":")[2] == self.token
            except ValueError:
                return False
        return request.bearer() == self.token

    def handle(self, request: FakeRequest) -> FakeResponse:
        page = MR_PAGE.fullmatch(request.path.rstrip("/"))
        if page and request.method in ("GET", "HEAD"):  # the web_url a person clicks
            return self._mr_page(page.group(1), int(page.group(2)))
        if ".git/" in request.path:
            if not self._authorized(request):
                return FakeResponse(401, "", {"www-authenticate": 'Basic realm="GitLab"'})
            return self._git_http(request)
        if not self._authorized(request):
            return FakeResponse(401, {"message": "401 Unauthorized"})
        for method, pattern, handler in self._routes:
            match = pattern.match(request.path)
            if match and method == request.method:
                args = match.groupdict()
                if "p" in args:
                    repo = self.lookup(args.pop("p"))
                    if repo is None:
                        return not_found()
                    return handler(request, repo, **args)
                return handler(request, **args)
        return FakeResponse(404, {"error": "404 Not Found"})

    def _mr_page(self, full_name: str, iid: int) -> FakeResponse:
        """The merge request's web page: title, state, branches, description and its notes."""
        with self.lock:
            mr = self.mrs.get(full_name, {}).get(iid)
            if mr is None:
                return FakeResponse(404, f"no merge request {full_name}!{iid}")
            notes = [
                (str(n.get("author", {}).get("username", "?")), str(n.get("body", "")))
                for n in self.notes_of(full_name, iid)
            ]
            page = HumanPage(
                kind=f"Merge request {full_name}!{iid}",
                title=str(mr["title"]),
                status=str(mr["state"]),
                body=str(mr.get("description") or ""),
                fake="GitLab fake",
                comments=notes,
                facts=[("branch", f"{mr['source_branch']} → {mr.get('target_branch', '')}")],
            )
        return page_response(page)

    def _git_http(self, request: FakeRequest) -> FakeResponse:
        """One smart-HTTP exchange through ``git http-backend`` (the CGI that ships with git)."""
        project, _, rest = request.path.partition(".git/")
        repo = self.lookup(project.strip("/"))
        if repo is None:
            return FakeResponse(404, "")
        status, headers, payload = git_http_exchange(
            repo.path.parent,
            request.method,
            f"/{repo.path.name}/{rest}",
            "&".join(f"{k}={v[-1]}" for k, v in request.query.items()),
            request.headers.get("content-type", ""),
            request.body,
            remote_user="oauth2",
        )
        ctype = next((v for k, v in headers if k.lower() == "content-type"), None)
        named = {k: v for k, v in headers if k.lower() != "content-type"}
        return FakeResponse(
            status, payload, named, content_type=ctype or "application/octet-stream"
        )


def _description(repo: BareRepo) -> str:
    """The first heading-free README line on the default branch: what a catalog shows."""
    entry = repo.entry(repo.default_branch(), "README.md")
    if entry is None:
        return ""
    for line in repo.blob(entry[1]).decode("utf-8", "replace").splitlines():
        if line.strip() and not line.startswith("#"):
            return line.strip()[:200]
    return ""
