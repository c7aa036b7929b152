"""Fake Jira REST API on 127.0.0.1, as Cloud (v3, ADF, basic auth) or Data Center (v2, wiki
text, bearer personal access token).

Covers what the product's ticket source calls, in the documented shapes: ``/search/jql``
(Cloud; ``nextPageToken`` present only while more pages exist, then ``isLast: true``),
``/search`` (Data Center; ``startAt``/``maxResults``/``total``), ``/issue/{key}``,
``/issue/{key}/comment`` (list and create), ``/myself``. The server may return fewer issues
than ``maxResults`` asks for (``page_cap``), as Jira does, so paging is really exercised.
Errors use Jira's ``{"errorMessages": [...], "errors": {}}`` body.

JQL is evaluated by ``jql_match`` for the grammar the product writes: clauses ``field op value``
(``=``, ``!=``, ``>=``, ``<=``, ``>``, ``<``, ``in``) over ``project``, ``labels``,
``assignee``, ``status``, ``statusCategory``, ``updated``, ``key``, joined by ``AND``/``OR``
with parentheses, and ``ORDER BY``; an unknown field is a 400 as on Jira.
"""

from __future__ import annotations

import base64
import itertools
import re
from datetime import UTC, datetime
from typing import Any

from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse
from veranda_dagster.sim.human_pages import HumanPage, page_response
from veranda_dagster.sim.jira_jql import JqlError, jql_match, order_key

BOT_ACCOUNT_ID = "5b10ac8d82e05b22cc7d4ef5"
BOT_NAME = "veranda"
HUMAN_ACCOUNT_ID = "5b10a2844c20165700ede21g"
MAX_RESULTS = 100


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + "000+0000"


def adf_paragraphs(text: str) -> dict[str, Any]:
    """The fake's own (independent) plain text -> ADF: one paragraph per blank-line block."""
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    content = [{"type": "paragraph", "content": [{"type": "text", "text": b}]} for b in blocks]
    return {"type": "doc", "version": 1, "content": content}


def adf_text(node: Any) -> str:
    """Every ``text`` leaf of an ADF tree, for the fake's own assertions and wiki rendering."""
    if isinstance(node, dict):
        own = str(node.get("text") or "") if node.get("type") == "text" else ""
        return own + "".join(adf_text(c) for c in node.get("content") or [])
    return ""


class JiraFake(FakeHttpServer):
    name = "jira"

    def __init__(
        self,
        token: str,
        *,
        cloud: bool = True,
        email: str = "veranda@acme.io",
        page_cap: int = MAX_RESULTS,
        clock: Any = None,
    ) -> None:
        super().__init__()
        self.token = token
        self.cloud = cloud
        self.email = email
        self.page_cap = page_cap
        self.issues: dict[str, dict[str, Any]] = {}
        self.comments: dict[str, list[dict[str, Any]]] = {}
        self._ids = itertools.count(10001)
        self._comment_ids = itertools.count(30001)
        self._clock = clock or (lambda: datetime.now(UTC))

    @property
    def version(self) -> str:
        return "3" if self.cloud else "2"

    # --- the test's side -------------------------------------------------------------------------

    def file_issue(
        self,
        key: str,
        summary: str,
        description: str = "",
        *,
        labels: list[str] | None = None,
        assignee: str | None = None,
        status: str = "To Do",
        category: str = "new",
        attachments: list[tuple[str, str]] | None = None,
        updated: datetime | None = None,
    ) -> dict[str, Any]:
        """Put an issue in; ``assignee`` is an account id (Cloud) or user name (Data Center)."""
        issue_id = str(next(self._ids))
        with self.lock:
            self.issues[key] = {
                "id": issue_id,
                "key": key,
                "summary": summary,
                "description": description,
                "labels": list(labels or []),
                "assignee": assignee,
                "status": status,
                "category": category,
                "project": key.split("-", 1)[0],
                "attachments": list(attachments or []),
                "updated": updated or self._clock(),
            }
            self.comments.setdefault(key, [])
        return self.issues[key]

    def add_comment(self, key: str, text: str, author: str = HUMAN_ACCOUNT_ID) -> str:
        body: Any = adf_paragraphs(text) if self.cloud else text
        return self._store_comment(key, body, author)

    def comment_texts(self, key: str) -> list[str]:
        return [adf_text(c["body"]) if self.cloud else c["body"] for c in self.comments[key]]

    def _store_comment(self, key: str, body: Any, author: str) -> str:
        now = self._clock()
        comment = {"id": str(next(self._comment_ids)), "author": author, "body": body, "at": now}
        with self.lock:
            self.comments[key].append(comment)
            self.issues[key]["updated"] = now
        return str(comment["id"])

    def _issue_page(self, key: str) -> FakeResponse:
        """The issue's web page: summary, status, description and its comments."""
        with self.lock:
            issue = self.issues.get(key)
            if issue is None:
                return FakeResponse(404, f"no issue {key}")
            description = issue.get("description") or ""
            page = HumanPage(
                kind=f"Issue {key}",
                title=str(issue["summary"]),
                status=str(issue.get("status", "?")),
                body=description if isinstance(description, str) else adf_text(description),
                fake="Jira fake",
                comments=[
                    (str(c["author"]), text)
                    for c, text in zip(self.comments[key], self.comment_texts(key), strict=True)
                ],
                facts=[("labels", ", ".join(issue.get("labels") or []))],
            )
        return page_response(page)

    # --- shapes --------------------------------------------------------------------------------

    def _user(self, ident: str | None) -> dict[str, Any] | None:
        if not ident:
            return None
        if self.cloud:
            return {"accountId": ident, "displayName": ident, "accountType": "atlassian"}
        return {"name": ident, "key": f"JIRAUSER-{ident}", "displayName": ident}

    def issue_json(self, issue: dict[str, Any]) -> dict[str, Any]:
        api = f"{self.base_url}/rest/api/{self.version}"
        description = issue["description"]
        if self.cloud:
            description = adf_paragraphs(description) if description else None
        fields = {
            "summary": issue["summary"],
            "description": description or None,
            "labels": issue["labels"],
            "assignee": self._user(issue["assignee"]),
            "status": {"name": issue["status"], "statusCategory": {"key": issue["category"]}},
            "project": {"key": issue["project"]},
            "updated": _stamp(issue["updated"]),
            "attachment": [
                {"id": str(n), "filename": name, "mimeType": mime,
                 "content": f"{api}/attachment/content/{n}"}
                for n, (name, mime) in enumerate(issue["attachments"], start=10100)
            ],
        }  # fmt: skip
        return {"id": issue["id"], "key": issue["key"], "self": f"{api}/issue/{issue['id']}",
                "fields": fields}  # fmt: skip

    def _comment_json(self, comment: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": comment["id"],
            "author": self._user(comment["author"]),
            "body": comment["body"],
            "created": _stamp(comment["at"]),
            "updated": _stamp(comment["at"]),
        }

    # --- dispatch ------------------------------------------------------------------------------

    def fault_body(self, status: int) -> Any:
        return {"errorMessages": [f"injected HTTP {status}"], "errors": {}}

    def _authorized(self, request: FakeRequest) -> bool:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if self.cloud and scheme.lower() == "basic":
            try:
                pair = base64.b64decode(value).decode()
            except ValueError:
                return False
            return pair == f"{self.email}:{self.token}"
        return not self.cloud and scheme.lower() == "bearer" and value == self.token

    def handle(self, request: FakeRequest) -> FakeResponse:
        page = re.fullmatch(r"/browse/([A-Z][A-Z0-9]*-\d+)", request.path.rstrip("/"))
        if page and request.method in ("GET", "HEAD"):  # the issue's browse URL
            return self._issue_page(page.group(1))
        if not self._authorized(request):
            return _error(401, "You are not authenticated. Authentication required.")
        prefix = f"/rest/api/{self.version}"
        if not request.path.startswith(prefix + "/"):
            return _error(404, "null for uri: " + request.path)
        route = request.path[len(prefix) :]
        if request.method == "GET" and route == "/myself":
            me = self._user(BOT_ACCOUNT_ID if self.cloud else BOT_NAME)
            return FakeResponse(200, me)
        if request.method == "GET" and route == ("/search/jql" if self.cloud else "/search"):
            return self._search(request)
        match = re.fullmatch(r"/issue/([^/]+)(/comment)?", route)
        if match:
            issue = self.issues.get(match.group(1))
            if issue is None:
                return _error(404, "Issue does not exist or you do not have permission to see it.")
            if not match.group(2) and request.method == "GET":
                return FakeResponse(200, self.issue_json(issue))
            if match.group(2) and request.method == "GET":
                return self._comment_page(request, issue["key"])
            if match.group(2) and request.method == "POST":
                return self._comment_create(request, issue["key"])
        return _error(404, f"no route for {request.method} {request.path}")

    def _search(self, request: FakeRequest) -> FakeResponse:
        try:
            now = self._clock()
            jql = request.arg("jql") or ""
            matched = [i for i in self.issues.values() if jql_match(jql, i, now)]
            matched.sort(key=lambda i: order_key(jql, i))
        except JqlError as exc:
            return _error(400, str(exc))
        size = max(1, min(int(request.arg("maxResults") or 50), self.page_cap))
        if self.cloud:
            token = request.arg("nextPageToken")
            start = int(base64.urlsafe_b64decode(token).decode()) if token else 0
        else:
            start = int(request.arg("startAt") or 0)
        page = [self.issue_json(i) for i in matched[start : start + size]]
        if not self.cloud:
            return FakeResponse(
                200, {"startAt": start, "maxResults": size, "total": len(matched), "issues": page}
            )
        body: dict[str, Any] = {"issues": page}
        if start + size < len(matched):
            body["nextPageToken"] = base64.urlsafe_b64encode(str(start + size).encode()).decode()
        else:
            body["isLast"] = True
        return FakeResponse(200, body)

    def _comment_page(self, request: FakeRequest, key: str) -> FakeResponse:
        start = int(request.arg("startAt") or 0)
        size = max(1, min(int(request.arg("maxResults") or 50), self.page_cap))
        rows = self.comments[key]
        if (request.arg("orderBy") or "").lstrip("+") == "-created":
            rows = rows[::-1]
        page = [self._comment_json(c) for c in rows[start : start + size]]
        return FakeResponse(
            200, {"startAt": start, "maxResults": size, "total": len(rows), "comments": page}
        )

    def _comment_create(self, request: FakeRequest, key: str) -> FakeResponse:
        body = (request.json() or {}).get("body")
        valid = (
            isinstance(body, dict) and body.get("type") == "doc" and body.get("version") == 1
            if self.cloud
            else isinstance(body, str) and bool(body)
        )
        if not valid:
            what = "an Atlassian Document" if self.cloud else "a string"
            return FakeResponse(
                400, {"errorMessages": [], "errors": {"comment": f"must be {what}"}}
            )
        author = BOT_ACCOUNT_ID if self.cloud else BOT_NAME
        comment_id = self._store_comment(key, body, author)
        return FakeResponse(201, self._comment_json(self.comments[key][-1]) | {"id": comment_id})


def _error(status: int, message: str) -> FakeResponse:
    return FakeResponse(status, {"errorMessages": [message], "errors": {}})
