"""GitLab REST v4 plumbing shared by the forge client and the code search: auth, errors,
pagination, project paths, projects and group listings, the git remote.

- **Base URL**: the instance root (``https://gitlab.com``, ``https://git.acme.io/gitlab``); every
  call is under ``/api/v4``, so a self-managed instance under a relative root works unchanged.
- **Auth**: a personal, project or group access token as ``Authorization: Bearer`` (accepted for
  all three, and for OAuth tokens; docs.gitlab.com/api/rest/authentication).
- **Project ids**: a numeric id, or the full path URL-encoded as one segment
  (``group%2Fsub%2Fproject``); subgroups are just more segments of that path.
- **Renamed projects**: the API looks a path up through the project's redirect routes
  (``find_by_full_path(id, follow_redirects: true)`` in ``lib/api/helpers.rb``) and answers
  with the project at its *new* ``path_with_namespace``; a same-origin HTTP redirect, where a
  proxy issues one, is followed by ``HttpService``. ``get_project`` reports the rename.
- **Pagination**: ``page``/``per_page`` (max 100) with ``x-next-page`` (empty on the last page)
  or a ``Link: rel="next"``; walks stop at ``MAX_FORGE_LIST_PAGES``.
- **Errors**: 401 -> ``HttpAuthError``; 403 -> ``GitLabPermissionError``; 404 ->
  ``GitLabNotFoundError``; 429 waits ``Retry-After`` (or ``RateLimit-Reset``) up to
  ``MAX_RATE_LIMIT_RESET_WAIT_S``, past it a ``TransientError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Unpack
from urllib.parse import quote

import httpx

from veranda_dagster.domain.core.bounds import (
    MAX_FORGE_LIST_PAGES,
    MAX_RATE_LIMIT_RESET_WAIT_S,
    MAX_VOCABULARY_FILE_BYTES,
)
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.http.client import HttpAuthError, HttpSeams, HttpService, HttpStatusError

API = "/api/v4"
PER_PAGE = 100
GIT_USERNAME = "oauth2"
"""The username GitLab requires beside an OAuth token over https (any name works for a
personal access token, so one name serves both)."""


class GitLabPermissionError(HttpAuthError):
    """HTTP 403: the token is valid but lacks the scope or role for this call."""


class GitLabNotFoundError(HttpStatusError):
    """HTTP 404: no such project, merge request or job (or one the token cannot see)."""


def project_ref(project: str | int) -> str:
    """A numeric id as-is, or ``group/sub/name`` validated and encoded as one path segment."""
    if isinstance(project, int) or str(project).isdigit():
        return str(project)
    path = str(project).strip("/")
    parts = path.split("/")
    if len(parts) < 2 or not all(parts) or any(p in (".", "..") for p in parts):
        raise InputError(f"gitlab: project {project!r} is not 'group/[subgroup/]name'")
    return quote(path, safe="")


@dataclass(frozen=True)
class GitRemote:
    """Where to clone and push, and as whom. ``url`` holds no secret (git gets the token from
    an askpass, never in a URL); ``redacted`` is what may be logged."""

    url: str
    username: str = GIT_USERNAME
    token: str = field(default="", repr=False)

    def redacted(self) -> str:
        scheme, _, rest = self.url.partition("://")
        return f"{scheme}://{self.username}:***@{rest}" if self.token else self.url

    def __str__(self) -> str:
        return self.redacted()


class GitLabApi(HttpService):
    service = "gitlab"
    max_retry_wait_s = MAX_RATE_LIMIT_RESET_WAIT_S
    default_headers = {"Accept": "application/json"}
    auth_rejected = "gitlab rejected the token (HTTP 401); check GITLAB_TOKEN"
    forbidden = "the token may not"
    permission_error = GitLabPermissionError
    not_found_error = GitLabNotFoundError

    def __init__(self, base_url: str, token: str | None, **seams: Unpack[HttpSeams]) -> None:
        super().__init__(base_url.removesuffix(API).rstrip("/"), token, **seams)
        self.renamed: dict[str, str] = {}
        """Old project path -> the path GitLab answered with, for every rename seen."""

    def retry_wait(self, response: httpx.Response, attempt: int) -> float | None:
        if response.status_code == 429 and not response.headers.get("retry-after"):
            reset = response.headers.get("ratelimit-reset")
            if reset and reset.isdigit():
                return max(0.0, float(reset) - self._clock())
        return super().retry_wait(response, attempt)

    def error_detail(self, response: httpx.Response) -> str:
        return _message(response)

    # --- transport helpers --------------------------------------------------------------------

    def _object(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        data = self.json(method, API + path, **kwargs)
        if not isinstance(data, dict):
            raise InputError(f"gitlab {method} {path}: response is not a JSON object")
        return data

    def _pages(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every item of a paged list, up to ``MAX_FORGE_LIST_PAGES`` pages (a cut is noted:
        ``truncated``, and a warning in the log)."""
        items: list[dict[str, Any]] = []
        query: dict[str, Any] = {"per_page": PER_PAGE, **params}
        url = API + path
        for _ in range(MAX_FORGE_LIST_PAGES):
            response = self.request("GET", url, params=query)
            page = response.json()
            if not isinstance(page, list):
                raise InputError(f"gitlab {path}: response is not a JSON list")
            items += [item for item in page if isinstance(item, dict)]
            next_page = response.headers.get("x-next-page", "").strip()
            if next_page.isdigit() and page:
                query = {**query, "page": int(next_page)}
            elif "next" in response.links and page:
                url, query = response.links["next"]["url"], {}
            else:
                break
        else:
            self.note_truncated(
                f"gitlab {path}: more than {MAX_FORGE_LIST_PAGES} pages; later ones not read"
            )
        return items

    # --- projects -----------------------------------------------------------------------------

    def get_project(self, project: str | int) -> dict[str, Any]:
        """``GET /projects/:id``; a renamed project's old path answers with its new one."""
        data = self._object("GET", f"/projects/{project_ref(project)}")
        current = str(data.get("path_with_namespace") or "")
        asked = str(project).strip("/")
        if not asked.isdigit() and current and current.lower() != asked.lower():
            self.renamed[asked] = current
        return data

    def find_project(self, project: str) -> dict[str, Any] | None:
        """``get_project`` that answers ``None`` for a project that does not exist."""
        try:
            return self.get_project(project)
        except GitLabNotFoundError:
            return None

    def list_group_projects(
        self, group: str, *, include_archived: bool = False
    ) -> list[dict[str, Any]]:
        """The group's projects *and its subgroups'* (``include_subgroups=true``), each with
        ``path_with_namespace``, ``description``, ``topics``, ``archived``, ``default_branch``:
        the catalog repository detection ranks."""
        params: dict[str, Any] = {"include_subgroups": "true", "order_by": "id", "sort": "asc"}
        if not include_archived:
            params["archived"] = "false"
        return self._pages(f"/groups/{quote(group.strip('/'), safe='')}/projects", **params)

    # --- the catalog's view (domain.intake.catalog_builder.RepositoryListing) ---------------------

    def list_org_repositories(self, org: str) -> list[dict[str, Any]]:
        """The group's projects and its subgroups' in the catalog's terms: ``full_name`` is
        the whole path (``acme/platform/billing``), archived ones included and flagged."""
        return [
            _repository(project) for project in self.list_group_projects(org, include_archived=True)
        ]

    def get_repository(self, owner: str, name: str) -> dict[str, Any] | None:
        """The project an ``owner/name`` path answers with now (its new path after a rename),
        or ``None`` when there is none."""
        project = self.find_project(f"{owner}/{name}")
        return _repository(project) if project else None

    def read_repository_file(self, full_name: str, path: str) -> str | None:
        """One file's text on the default branch (the raw-file endpoint), for the catalog's
        vocabulary; ``None`` when absent or over the vocabulary bound."""
        url = f"{API}/projects/{project_ref(full_name)}/repository/files/"
        url += quote(path.strip("/"), safe="") + "/raw"
        try:
            response = self.request("GET", url)
        except GitLabNotFoundError:
            return None
        if len(response.content) > MAX_VOCABULARY_FILE_BYTES:
            return None
        return response.content.decode("utf-8", errors="replace")

    def list_repository_dir(self, full_name: str, path: str) -> list[str] | None:
        """A folder's entries on the default branch (``repository/tree``, one page of 100),
        sub-folders ending in ``/``."""
        params: dict[str, Any] = {"per_page": PER_PAGE}
        if path.strip("/"):
            params["path"] = path.strip("/")
        try:
            data = self.json(
                "GET", f"{API}/projects/{project_ref(full_name)}/repository/tree", params=params
            )
        except GitLabNotFoundError:
            return None
        if not isinstance(data, list):
            return None
        return [
            str(e.get("name")) + ("/" if e.get("type") == "tree" else "")
            for e in data
            if isinstance(e, dict) and e.get("name")
        ]

    def remote(self, project: str) -> GitRemote:
        """The https clone/push remote of ``project`` on this instance, with our token."""
        path = self.renamed.get(project.strip("/"), project.strip("/"))
        project_ref(path)  # validates
        return GitRemote(url=f"{self.base_url}/{path}.git", token=self._token)


def _repository(project: dict[str, Any]) -> dict[str, Any]:
    return {
        "full_name": str(project.get("path_with_namespace") or ""),
        "description": str(project.get("description") or ""),
        "topics": [str(t) for t in project.get("topics") or project.get("tag_list") or []],
        "language": None,
        "archived": bool(project.get("archived")),
    }


def _message(response: httpx.Response) -> str:
    """GitLab's ``{"message": ...}`` or ``{"error": ...}`` error body as one line."""
    try:
        data = response.json()
    except ValueError:
        return response.text
    if isinstance(data, dict):
        value = data.get("message") or data.get("error") or data.get("error_description")
        return str(value) if value else response.text
    return response.text
