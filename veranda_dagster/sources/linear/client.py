"""Linear GraphQL client: poll the bot's issues, read one issue, post a comment.

Linear has one URL, so every call is a named operation (``operationName``) and fakes route on it.
Errors come in three shapes and each maps to a type the caller can act on: HTTP 429 (retried by
``HttpService`` on Retry-After), a GraphQL ``errors`` array with ``extensions.type`` (200 or 400:
``ratelimited`` retried here, authentication/forbidden -> ``HttpAuthError``), and the
``x-ratelimit-requests-remaining: 0`` header, which makes the *next* request wait for the reset
instead of spending a request to learn it is throttled.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Unpack

import httpx

from veranda_dagster.domain.core.bounds import MAX_RATE_LIMIT_RESET_WAIT_S
from veranda_dagster.domain.core.errors import InputError, TransientError, VerandaError
from veranda_dagster.http.client import (
    HttpAuthError,
    HttpSeams,
    HttpService,
    HttpStatusError,
    retry_after_seconds,
)
from veranda_dagster.sources.linear.limits import (
    LINEAR_PAGE_SIZE,
    MAX_LINEAR_PAGES_PER_TICK,
    MAX_LINEAR_RATELIMIT_RETRIES,
)

LINEAR_API_URL = "https://api.linear.app/graphql"

ISSUE_FIELDS = """id identifier title description url updatedAt branchName
 state{id name type} team{id key} labels{nodes{name}}
 attachments{nodes{id title url sourceType}}"""

POLL_QUERY = (
    "query PollIssues($first:Int!,$after:String,$filter:IssueFilter){"
    " issues(first:$first,after:$after,orderBy:updatedAt,filter:$filter){"
    " pageInfo{hasNextPage endCursor} nodes{" + ISSUE_FIELDS + "}}}"
)
ISSUE_QUERY = "query GetIssue($id:String!){ issue(id:$id){" + ISSUE_FIELDS + "}}"
COMMENTS_QUERY = (
    "query IssueComments($id:String!){ issue(id:$id){ id"
    " comments(first:50){nodes{id body createdAt user{id} botActor{name}}}}}"
)
COMMENT_MUTATION = (
    "mutation CommentCreate($input:CommentCreateInput!){"
    " commentCreate(input:$input){success comment{id url}}}"
)


class LinearApiError(VerandaError):
    """Linear answered with a GraphQL error that is neither auth nor rate limit."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(f"linear error ({kind}): {message[:300]}")


class LinearRateLimitError(TransientError):
    """Linear kept answering ``ratelimited`` past our bound; try again on a later tick."""


_AUTH_KINDS = ("authentication", "forbidden", "unauthorized")


def _error_kind(error: dict[str, Any]) -> str:
    ext = error.get("extensions") or {}
    kind = str(ext.get("type") or ext.get("code") or "unknown")
    return kind.lower().replace("_", " ")


class LinearClient(HttpService):
    """Thin GraphQL client. ``bot_user_id``/``label`` scope the poll to the bot's work."""

    service = "linear"

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        bot_user_id: str | None = None,
        label: str | None = None,
        **seams: Unpack[HttpSeams],
    ) -> None:
        super().__init__(base_url, token, **seams)
        self.bot_user_id = bot_user_id
        self.label = label
        self._not_before = 0.0
        self._own_id: str | None = None

    def _auth_headers(self) -> dict[str, str]:
        """Personal keys (``lin_api_``) go raw; OAuth tokens as Bearer (Linear SDK client.ts)."""
        if not self._token:
            return {}
        if self._token.startswith("lin_api_"):
            return {"Authorization": self._token}
        return {"Authorization": f"Bearer {self._token}"}

    # --- transport of one operation ----------------------------------------------------------

    def graphql(self, operation: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """Run one named operation and return ``data``; errors become typed exceptions."""
        for attempt in range(1, MAX_LINEAR_RATELIMIT_RETRIES + 2):
            self._wait_for_window()
            body = {"query": query, "variables": variables, "operationName": operation}
            try:
                response = self.request("POST", self.base_url, json=body)
            except HttpStatusError as exc:
                if exc.status == 400 and "ratelimited" in str(exc).lower():
                    if attempt <= MAX_LINEAR_RATELIMIT_RETRIES:
                        self._wait(min(2.0**attempt, MAX_RATE_LIMIT_RESET_WAIT_S))
                        continue
                    raise LinearRateLimitError(f"linear {operation}: rate limited") from None
                if exc.status == 400 and "authentication" in str(exc).lower():
                    raise HttpAuthError("linear rejected the credentials") from None
                raise
            self._note_window(response)
            payload = self._decode(response, operation)
            errors = payload.get("errors")
            if errors:
                first = errors[0] if isinstance(errors[0], dict) else {}
                kind = _error_kind(first)
                if "ratelimit" in kind.replace(" ", ""):
                    wait = retry_after_seconds(response, default=self._reset_wait(response))
                    if attempt <= MAX_LINEAR_RATELIMIT_RETRIES and wait <= (
                        MAX_RATE_LIMIT_RESET_WAIT_S
                    ):
                        self._wait(wait)
                        continue
                    raise LinearRateLimitError(f"linear {operation}: rate limited")
                if any(k in kind for k in _AUTH_KINDS):
                    raise HttpAuthError(f"linear rejected the credentials ({kind})")
                ext = first.get("extensions") or {}
                message = str(ext.get("userPresentableMessage") or first.get("message") or "")
                raise LinearApiError(kind, self._clean(message))
            data = payload.get("data")
            if not isinstance(data, dict):
                raise InputError(f"linear {operation}: response has no 'data' object")
            return data
        raise LinearRateLimitError(f"linear {operation}: rate limited")  # pragma: no cover

    def _decode(self, response: httpx.Response, operation: str) -> dict[str, Any]:
        try:
            payload = response.json()
        except ValueError:  # json.JSONDecodeError is one
            raise InputError(f"linear {operation}: response body is not JSON") from None
        if not isinstance(payload, dict):
            raise InputError(f"linear {operation}: response body is not a JSON object")
        return payload

    def _reset_wait(self, response: httpx.Response) -> float:
        """Seconds until ``x-ratelimit-requests-reset`` (epoch s, or ms if > 1e12)."""
        raw = response.headers.get("x-ratelimit-requests-reset")
        try:
            reset = float(raw) if raw else 0.0
        except ValueError:
            return 1.0
        if reset > 1e12:
            reset /= 1000.0
        return max(0.0, reset - self._clock()) if reset else 1.0

    def _note_window(self, response: httpx.Response) -> None:
        if response.headers.get("x-ratelimit-requests-remaining", "").strip() == "0":
            self._not_before = self._clock() + self._reset_wait(response)

    def _wait_for_window(self) -> None:
        """Honour an exhausted request window before spending the next request."""
        if not self._not_before:
            return
        wait = self._not_before - self._clock()
        self._not_before = 0.0
        if wait <= 0:
            return
        if wait > MAX_RATE_LIMIT_RESET_WAIT_S:
            raise LinearRateLimitError(
                f"linear request window resets in {wait:.0f}s"
                f" (> {MAX_RATE_LIMIT_RESET_WAIT_S:.0f}s)"
            )
        self._wait(wait)

    # --- operations --------------------------------------------------------------------------

    def issue_filter(self, updated_since: str | None) -> dict[str, Any]:
        """Issues assigned or delegated to the bot, or carrying the configured label."""
        who: dict[str, Any] = (
            {"id": {"eq": self.bot_user_id}} if self.bot_user_id else {"isMe": {"eq": True}}
        )
        scope: list[dict[str, Any]] = [{"assignee": who}, {"delegate": who}]
        if self.label:
            scope.append({"labels": {"some": {"name": {"eqIgnoreCase": self.label}}}})
        flt: dict[str, Any] = {
            "or": scope,
            "state": {"type": {"nin": ["completed", "canceled"]}},
        }
        if updated_since:
            flt["updatedAt"] = {"gt": updated_since}
        return flt

    def list_issues(
        self, updated_since: str | None, after: str | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """One page: (issue nodes, ``{"hasNextPage": bool, "endCursor": str | None}``)."""
        variables = {
            "first": LINEAR_PAGE_SIZE,
            "after": after,
            "filter": self.issue_filter(updated_since),
        }
        data = self.graphql("PollIssues", POLL_QUERY, variables)
        issues = data.get("issues")
        if not isinstance(issues, dict):
            raise InputError("linear PollIssues: 'data.issues' is missing")
        nodes = issues.get("nodes")
        if not isinstance(nodes, list):
            raise InputError("linear PollIssues: 'data.issues.nodes' is not a list")
        page_info = issues.get("pageInfo")
        if not isinstance(page_info, dict) or not isinstance(page_info.get("hasNextPage"), bool):
            raise InputError("linear PollIssues: 'data.issues.pageInfo.hasNextPage' is missing")
        return [n for n in nodes if isinstance(n, dict)], page_info

    def iter_issue_pages(
        self, updated_since: str | None, after: str | None = None
    ) -> Iterator[tuple[list[dict[str, Any]], dict[str, Any]]]:
        """Pages until ``hasNextPage`` is false, at most ``MAX_LINEAR_PAGES_PER_TICK``."""
        for _ in range(MAX_LINEAR_PAGES_PER_TICK):
            nodes, page_info = self.list_issues(updated_since, after)
            yield nodes, page_info
            after = page_info.get("endCursor")
            if not page_info["hasNextPage"] or not after:
                return

    def get_issue(self, identifier: str) -> dict[str, Any]:
        """One issue by identifier (``ENG-123``) or UUID; Linear's ``issue(id:)`` takes both."""
        data = self.graphql("GetIssue", ISSUE_QUERY, {"id": identifier})
        issue = data.get("issue")
        if not isinstance(issue, dict):
            raise InputError(f"linear GetIssue: issue {identifier!r} not found")
        return issue

    def own_user_id(self) -> str:
        """The token's own user (``viewer``), asked once: a post is ours by this id, not by
        the marker in its text."""
        if self._own_id is None:
            viewer = self.graphql("Viewer", "query Viewer{ viewer { id } }", {}).get("viewer")
            found = viewer.get("id") if isinstance(viewer, dict) else None
            if not isinstance(found, str) or not found:
                raise InputError("linear Viewer: 'viewer.id' is missing")
            self._own_id = found
        return self._own_id

    def comments(self, issue_id: str) -> list[dict[str, Any]]:
        """The issue's recent comments, for look-before-create idempotency."""
        data = self.graphql("IssueComments", COMMENTS_QUERY, {"id": issue_id})
        issue = data.get("issue") or {}
        nodes = (issue.get("comments") or {}).get("nodes")
        return [n for n in nodes if isinstance(n, dict)] if isinstance(nodes, list) else []

    def comment_create(self, issue_id: str, body: str) -> str:
        """Post a comment on the issue (UUID); returns the comment id."""
        data = self.graphql(
            "CommentCreate", COMMENT_MUTATION, {"input": {"issueId": issue_id, "body": body}}
        )
        payload = data.get("commentCreate") or {}
        comment = payload.get("comment") or {}
        if not payload.get("success") or not comment.get("id"):
            raise InputError("linear CommentCreate: 'commentCreate.comment.id' is missing")
        return str(comment["id"])
