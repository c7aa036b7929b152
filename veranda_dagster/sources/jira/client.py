"""Jira REST as a ticket source: JQL search with an ``updated`` cursor, one issue, comments.

One client speaks both deployments, because they differ in a handful of documented places:

- **Cloud** (``api_version="3"``): basic auth with the account email and an API token; search is
  ``GET /rest/api/3/search/jql`` paged by an opaque ``nextPageToken`` (absent, not null, on the
  last page: JRACLOUD-92184) with ``isLast``; descriptions and comment bodies are Atlassian
  Document Format and a posted comment must be ADF (``adf``).
- **Data Center** (``api_version="2"``): a personal access token sent as ``Authorization:
  Bearer``; search is ``GET /rest/api/2/search`` paged by ``startAt``/``maxResults``/``total``;
  bodies are wiki-markup strings.

Errors map to types a caller acts on: 401 -> ``HttpAuthError`` (bad credentials), 403 ->
``JiraPermissionError`` (the account cannot see or comment), 404 -> ``JiraNotFoundError``; 429
and 503 wait ``Retry-After`` (Jira Cloud's rate-limit guide) up to
``MAX_RATE_LIMIT_RESET_WAIT_S`` and surface as ``TransientError`` past it. Every walk is bounded
(``MAX_TICKET_SEARCH_PAGES_PER_TICK``, ``MAX_TICKET_COMMENT_PAGES``).

Posting is idempotent: each post carries a ``veranda:<digest>`` marker line (ADF has no hidden
comment node, so it is a short visible line) and the issue's comments are read for it first.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Unpack
from urllib.parse import quote

import httpx

from veranda_dagster.domain.core.bounds import (
    MAX_RATE_LIMIT_RESET_WAIT_S,
    MAX_TICKET_COMMENT_PAGES,
    MAX_TICKET_SEARCH_PAGES_PER_TICK,
    TICKET_SEARCH_PAGE_SIZE,
)
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.http.client import HttpAuthError, HttpSeams, HttpService, HttpStatusError
from veranda_dagster.sources.jira.adf import adf_to_text, text_to_adf

ApiVersion = Literal["2", "3"]
ISSUE_FIELDS = "summary,description,labels,status,assignee,updated,attachment,project"
COMMENT_PAGE_SIZE = 100


class JiraPermissionError(HttpAuthError):
    """HTTP 403: the credentials are valid but the account may not see or change this."""


class JiraNotFoundError(HttpStatusError):
    """HTTP 404: no such issue (or one the account cannot see: Jira answers both with 404)."""


@dataclass(frozen=True)
class JiraAttachment:
    filename: str
    url: str
    mime_type: str = ""
    size: int = 0


@dataclass(frozen=True)
class JiraIssue:
    key: str
    id: str
    summary: str
    description: str
    url: str
    updated: str
    labels: list[str] = field(default_factory=list)
    status: str = ""
    status_category: str = ""
    assignee: str = ""
    project: str = ""
    attachments: list[JiraAttachment] = field(default_factory=list)


@dataclass(frozen=True)
class JiraComment:
    id: str
    author_id: str
    author_name: str
    body: str
    created: str
    updated: str


def jql_string(value: str) -> str:
    """``value`` as a quoted JQL string literal (backslash and double quote escaped)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def marker_line(marker: str) -> str:
    return f"[{marker}]"


class JiraClient(HttpService):
    """Thin Jira REST client; ``label``/``assignee``/``project`` scope the poll to our work."""

    service = "jira"
    max_retry_wait_s = MAX_RATE_LIMIT_RESET_WAIT_S
    default_headers = {"Accept": "application/json"}
    auth_rejected = "jira rejected the credentials (HTTP 401); check the API token"
    forbidden = "the account may not"
    permission_error = JiraPermissionError
    not_found_error = JiraNotFoundError

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        email: str | None = None,
        api_version: ApiVersion | None = None,
        label: str | None = None,
        assignee: str | None = None,
        project: str | None = None,
        **seams: Unpack[HttpSeams],
    ) -> None:
        super().__init__(base_url, token, **seams)
        self.email = email or ""
        self.api_version: ApiVersion = api_version or ("3" if email else "2")
        if self.api_version not in ("2", "3"):
            raise ConfigError(f"jira: api_version {self.api_version!r} is not '2' or '3'")
        if not (label or assignee):
            raise ConfigError("jira: set a label or an assignee to scope the issue search")
        self.label = label
        self.assignee = assignee
        self.project = project
        self._own_id: str | None = None

    @property
    def api(self) -> str:
        return f"/rest/api/{self.api_version}"

    def _auth_headers(self) -> dict[str, str]:
        """Cloud: Basic ``email:api_token``; Data Center: ``Bearer <personal access token>``."""
        if not self._token:
            return {}
        if self.email:
            pair = base64.b64encode(f"{self.email}:{self._token}".encode()).decode()
            return {"Authorization": f"Basic {pair}"}
        return {"Authorization": f"Bearer {self._token}"}

    def error_detail(self, response: httpx.Response) -> str:
        return _messages(response)

    # --- search -------------------------------------------------------------------------------

    def jql(self, updated_since: str | None = None) -> str:
        """Open issues with the label or assignee, oldest update first (the cursor's order)."""
        scope = []
        if self.label:
            scope.append(f"labels = {jql_string(self.label)}")
        if self.assignee:
            scope.append(f"assignee = {jql_string(self.assignee)}")
        clauses = ["(" + " OR ".join(scope) + ")", "statusCategory != Done"]
        if self.project:
            clauses.insert(0, f"project = {jql_string(self.project)}")
        if updated_since:
            clauses.append(f"updated >= {jql_string(updated_since)}")
        return " AND ".join(clauses) + " ORDER BY updated ASC, key ASC"

    def iter_issue_pages(self, updated_since: str | None = None) -> Iterator[list[JiraIssue]]:
        """Pages of matching issues, at most ``MAX_TICKET_SEARCH_PAGES_PER_TICK`` of them.

        ``updated_since`` is a JQL date literal (``2026/12/03 05:40``, the instance's zone)."""
        params: dict[str, Any] = {
            "jql": self.jql(updated_since),
            "maxResults": TICKET_SEARCH_PAGE_SIZE,
            "fields": ISSUE_FIELDS,
        }
        path = f"{self.api}/search/jql" if self.api_version == "3" else f"{self.api}/search"
        start_at = 0
        for _ in range(MAX_TICKET_SEARCH_PAGES_PER_TICK):
            if self.api_version == "2":
                params["startAt"] = start_at
            data = self._object("GET", path, params=params)
            raw = data.get("issues")
            if not isinstance(raw, list):
                raise InputError(f"jira {path}: response has no 'issues' list")
            yield [self._issue(item) for item in raw if isinstance(item, dict)]
            if self.api_version == "3":
                token = data.get("nextPageToken")
                if not token or data.get("isLast") is True:
                    return
                params["nextPageToken"] = token
            else:
                start_at += len(raw)
                if not raw or start_at >= int(data.get("total") or 0):
                    return

    def get_issue(self, key: str) -> JiraIssue:
        data = self._object("GET", f"{self.api}/issue/{_key(key)}", params={"fields": ISSUE_FIELDS})
        return self._issue(data)

    def myself(self) -> dict[str, Any]:
        """The authenticated account: ``accountId`` on Cloud, ``name``/``key`` on Data Center."""
        return self._object("GET", f"{self.api}/myself")

    def own_account_id(self) -> str:
        """Our account's id (``myself``), asked once: a post is ours by author, not by text."""
        if self._own_id is None:
            found, _ = _account(self.myself())
            if not found:
                raise InputError("jira myself: no accountId, name or key")
            self._own_id = found
        return self._own_id

    # --- comments -----------------------------------------------------------------------------

    def comments(self, key: str) -> list[JiraComment]:
        """The issue's *newest* comments (``orderBy=-created``, up to
        ``MAX_TICKET_COMMENT_PAGES`` pages), returned oldest first: our own recent post and the
        latest word on a long thread are what callers look for, never the thread's start."""
        out: list[JiraComment] = []
        start_at = 0
        for _ in range(MAX_TICKET_COMMENT_PAGES):
            data = self._object(
                "GET",
                f"{self.api}/issue/{_key(key)}/comment",
                params={
                    "startAt": start_at,
                    "maxResults": COMMENT_PAGE_SIZE,
                    "orderBy": "-created",
                },
            )
            page = data.get("comments")
            if not isinstance(page, list):
                raise InputError(f"jira issue {key}: comment page has no 'comments' list")
            out += [_comment(c) for c in page if isinstance(c, dict)]
            start_at += len(page)
            if not page or start_at >= int(data.get("total") or 0):
                break
        return out[::-1]

    def add_comment(self, key: str, text: str) -> str:
        """Post ``text`` (ADF on v3, wiki text on v2); returns the comment id."""
        body: Any = text_to_adf(text) if self.api_version == "3" else text
        data = self._object("POST", f"{self.api}/issue/{_key(key)}/comment", json={"body": body})
        if not data.get("id"):
            raise InputError(f"jira issue {key}: the created comment has no 'id'")
        return str(data["id"])

    def post_once(self, key: str, text: str, marker: str) -> str:
        """Post ``text`` with ``marker`` unless a comment already carries it (a retried step)."""
        tag, own = marker_line(marker), self.own_account_id()
        for comment in self.comments(key):  # ours by author: anyone can paste a marker line
            if tag in comment.body and comment.author_id == own:
                return comment.id
        return self.add_comment(key, f"{text}\n\n{tag}")

    # --- parsing ------------------------------------------------------------------------------

    def _object(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        data = self.json(method, url, **kwargs)
        if not isinstance(data, dict):
            raise InputError(f"jira {method} {url}: response is not a JSON object")
        return data

    def _issue(self, data: dict[str, Any]) -> JiraIssue:
        key = data.get("key")
        fields = data.get("fields")
        if not isinstance(key, str) or not key or not isinstance(fields, dict):
            raise InputError("jira issue: field 'key' or 'fields' is missing")
        status = fields.get("status") or {}
        category = status.get("statusCategory") or {} if isinstance(status, dict) else {}
        assignee = fields.get("assignee") or {}
        attachments = [
            JiraAttachment(
                filename=str(a.get("filename") or ""),
                url=str(a["content"]),
                mime_type=str(a.get("mimeType") or ""),
                size=int(a.get("size") or 0),
            )
            for a in fields.get("attachment") or []
            if isinstance(a, dict) and isinstance(a.get("content"), str)
        ]
        return JiraIssue(
            key=key,
            id=str(data.get("id") or ""),
            summary=str(fields.get("summary") or ""),
            description=adf_to_text(fields.get("description")),
            url=f"{self.base_url}/browse/{key}",
            updated=str(fields.get("updated") or ""),
            labels=[str(x) for x in fields.get("labels") or [] if isinstance(x, str)],
            status=str(status.get("name") or "") if isinstance(status, dict) else "",
            status_category=str(category.get("key") or ""),
            assignee=_account(assignee)[0] if isinstance(assignee, dict) else "",
            project=str((fields.get("project") or {}).get("key") or ""),
            attachments=attachments,
        )


def _account(user: dict[str, Any]) -> tuple[str, str]:
    """(id, display name): ``accountId`` on Cloud, ``name`` (or ``key``) on Data Center."""
    ident = user.get("accountId") or user.get("name") or user.get("key") or ""
    return str(ident), str(user.get("displayName") or ident)


def _comment(data: dict[str, Any]) -> JiraComment:
    author_id, author_name = _account(data.get("author") or {})
    return JiraComment(
        id=str(data.get("id") or ""),
        author_id=author_id,
        author_name=author_name,
        body=adf_to_text(data.get("body")),
        created=str(data.get("created") or ""),
        updated=str(data.get("updated") or data.get("created") or ""),
    )


def _key(key: str) -> str:
    """An issue key (``ABC-123``) or numeric id, validated and quoted for a URL path."""
    if not key or len(key) > 64 or not all(ch.isalnum() or ch in "-_" for ch in key):
        raise InputError(f"jira: {key[:64]!r} is not an issue key")
    return quote(key, safe="")


def _messages(response: httpx.Response) -> str:
    """Jira's error body ``{"errorMessages": [...], "errors": {...}}`` as one line."""
    try:
        data = response.json()
    except ValueError:
        return response.text
    if not isinstance(data, dict):
        return response.text
    parts = [str(m) for m in data.get("errorMessages") or []]
    parts += [f"{k}: {v}" for k, v in (data.get("errors") or {}).items()]
    return "; ".join(parts) or response.text
