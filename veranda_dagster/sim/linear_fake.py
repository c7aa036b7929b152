"""Fake Linear GraphQL API (``POST /graphql``) holding tickets a test or the demo files.

There is no GraphQL parser: Linear has one URL, so the product's operations are recognised by
``operationName`` and, failing that, by the root field the query selects (``issues(``,
``issue(``, ``commentCreate``, ``issueUpdate``, ``viewer``). Every answer returns the full issue
node (clients ignore extra keys, as with the real API). ``IssueFilter`` is evaluated for the
shapes the reference lists: ``and``/``or``, ``assignee``/``delegate`` (``id``, ``isMe``,
``email``), ``labels`` (``some``/``every`` with ``name``), ``updatedAt``, ``state``, ``team``,
with the comparators ``eq neq in nin gt gte lt lte eqIgnoreCase``.
"""

from __future__ import annotations

import base64
import re
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse
from veranda_dagster.sim.human_pages import HumanPage, page_response
from veranda_dagster.sim.push_intake import linear_issue_body, post_signed_linear

BOT_USER_ID = "lin-user-bot"
HUMAN_USER_ID = "lin-user-ana"
STATES = {
    "todo": {"id": "state-todo", "name": "Todo", "type": "unstarted", "position": 1},
    "in_progress": {"id": "state-started", "name": "In Progress", "type": "started", "position": 2},
    "done": {"id": "state-done", "name": "Done", "type": "completed", "position": 3},
}
ISSUE_PAGE = re.compile(r"/[\w.-]+/issue/([A-Z][A-Z0-9]*-\d+)(?:/[\w-]*)?")
"""An issue's ``url`` path on the fake (``/acme/issue/ENG-101/slug``), as on linear.app."""
MAX_PAGE = 250
"""Linear caps ``first`` at 250."""

MAX_RECORDED_DELIVERIES: Final = 256
"""Webhook deliveries remembered for ``deliveries`` (a long ``veranda dev`` session files
tickets for hours; the oldest are forgotten first)."""
_ROOT = re.compile(r"\b(issues|issue|commentCreate|issueUpdate|viewer|team)\s*[({]")


def _iso(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _error(message: str, kind: str, status: int = 200) -> FakeResponse:
    code = kind.upper().replace(" ", "_")
    ext = {"type": kind, "code": code, "userPresentableMessage": message}
    return FakeResponse(status, {"errors": [{"message": message, "extensions": ext}]})


@dataclass(frozen=True)
class Delivery:
    """One webhook the fake posted: the receiver's status, or the error that stopped it."""

    key: str
    status: int | None
    error: str = ""


class LinearFake(FakeHttpServer):
    """``file_ticket`` puts an issue in; ``comments_of`` reads what the product posted."""

    name = "linear"

    def __init__(self, token: str | None = None, team_key: str = "ENG") -> None:
        super().__init__()
        self.token = token
        """When set, any other ``Authorization`` value is an authentication error."""
        self.team = {"id": "team-eng", "key": team_key, "name": "Engineering"}
        self.issues: dict[str, dict[str, Any]] = {}
        self._number = 100
        self._clock = datetime.now(UTC) - timedelta(minutes=5)
        self._webhook: tuple[str, str] | None = None
        self.deliveries: deque[Delivery] = deque(maxlen=MAX_RECORDED_DELIVERIES)
        """Each webhook sent, oldest first: the receiver's status, or why none came."""

    @property
    def graphql_url(self) -> str:
        return f"{self.base_url}/graphql"

    # --- test/demo API --------------------------------------------------------------------------

    def _tick(self) -> str:
        """Strictly increasing ``updatedAt`` values, so high-water marks are exercised."""
        now = datetime.now(UTC)
        self._clock = max(now, self._clock + timedelta(milliseconds=1))
        return _iso(self._clock)

    def file_ticket(
        self,
        title: str,
        description: str = "",
        *,
        labels: tuple[str, ...] | list[str] = (),
        assignee: str | None = BOT_USER_ID,
        delegate: str | None = None,
        identifier: str | None = None,
        state: str = "todo",
    ) -> dict[str, Any]:
        with self.lock:
            if identifier is None:
                self._number += 1
                identifier = f"{self.team['key']}-{self._number}"
            issue_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"linear-fake/{identifier}"))
            slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40]
            issue: dict[str, Any] = {
                "id": issue_id,
                "identifier": identifier,
                "title": title,
                "description": description,
                "url": f"{self.base_url}/acme/issue/{identifier}/{slug}",
                "createdAt": self._tick(),
                "updatedAt": self._tick(),
                "branchName": f"ana/{identifier.lower()}-{slug}",
                "state": {k: v for k, v in STATES[state].items() if k != "position"},
                "team": {"id": self.team["id"], "key": self.team["key"]},
                "labels": {"nodes": [{"name": name} for name in labels]},
                "attachments": {"nodes": []},
                "assignee": {"id": assignee, "name": "bot"} if assignee else None,
                "delegate": {"id": delegate, "name": "bot"} if delegate else None,
                "comments": {"nodes": []},
            }
            self.issues[issue_id] = issue
        if self._webhook is not None:
            url, secret = self._webhook
            body = linear_issue_body(
                identifier,
                assignee_id=assignee,
                labels=list(labels),
                state_type=str(STATES[state]["type"]),
                delivery_id=f"linear-fake-{uuid.uuid4()}",
            )
            args = (identifier, url, secret, body)
            threading.Thread(target=self._deliver, args=args, daemon=True).start()
        return issue

    def deliver_webhooks(self, url: str, secret: str) -> None:
        """From now on, post each ticket filed to ``url``, signed with ``secret``, as Linear's
        workspace webhook posts an ``Issue`` ``create``: after the issue exists, from another
        thread, so a slow or dead receiver never delays filing (the poll still finds it)."""
        self._webhook = (url, secret)

    def _deliver(self, key: str, url: str, secret: str, body: bytes) -> None:
        try:
            self.deliveries.append(Delivery(key, post_signed_linear(url, secret, body)))
        except OSError as exc:
            self.deliveries.append(Delivery(key, None, f"{type(exc).__name__}: {exc}"))

    def touch(self, identifier: str, **fields: Any) -> dict[str, Any]:
        """Edit an issue (title, description) and bump ``updatedAt``, like a human edit."""
        with self.lock:
            issue = self.find(identifier)
            if issue is None:
                raise KeyError(identifier)
            issue.update(fields)
            issue["updatedAt"] = self._tick()
            return issue

    def add_comment(self, identifier: str, body: str, user_id: str = HUMAN_USER_ID) -> str:
        issue = self.find(identifier)
        if issue is None:
            raise KeyError(identifier)
        return str(self._comment(issue, body, user_id)["id"])

    def find(self, key: str) -> dict[str, Any] | None:
        with self.lock:
            if key in self.issues:
                return self.issues[key]
            return next((i for i in self.issues.values() if i["identifier"] == key), None)

    def comments_of(self, identifier: str) -> list[str]:
        issue = self.find(identifier)
        return [c["body"] for c in issue["comments"]["nodes"]] if issue else []

    def bot_comments(self, identifier: str) -> list[str]:
        issue = self.find(identifier)
        nodes = issue["comments"]["nodes"] if issue else []
        return [c["body"] for c in nodes if c["user"]["id"] == BOT_USER_ID]

    def fault_body(self, status: int) -> Any:
        if status == 429:
            ext = {"type": "ratelimited", "code": "RATELIMITED"}
            return {"errors": [{"message": "Rate limit exceeded", "extensions": ext}]}
        if status in (401, 403):
            kind = "authentication error" if status == 401 else "forbidden"
            return {
                "errors": [{"message": "Authentication required", "extensions": {"type": kind}}]
            }
        return {
            "errors": [{"message": "Internal server error", "extensions": {"type": "internal"}}]
        }

    # --- dispatch -------------------------------------------------------------------------------

    def handle(self, request: FakeRequest) -> FakeResponse:
        page = ISSUE_PAGE.fullmatch(request.path.rstrip("/"))
        if page and request.method in ("GET", "HEAD"):  # the issue's url a person clicks
            return self._issue_page(page.group(1))
        if request.path.rstrip("/") not in ("/graphql", ""):
            return FakeResponse(404, {"errors": [{"message": f"no route {request.path}"}]})
        if request.method != "POST":
            return _error("GraphQL only accepts POST here", "invalid input", 400)
        if self.token is not None and not self._authorized(request):
            return _error("Authentication required, not authenticated", "authentication error", 401)
        payload = request.json()
        if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
            return _error("Body must be a JSON object with a 'query' string", "invalid input", 400)
        variables = payload.get("variables") or {}
        query = payload["query"]
        op = str(payload.get("operationName") or "")
        root = self._root_field(query)
        with self.lock:
            if root == "issues":
                return FakeResponse(200, {"data": {"issues": self._issues(query, variables)}})
            if root == "issue":
                return self._issue(query, variables)
            if root == "commentCreate":
                return self._comment_create(query, variables)
            if root == "issueUpdate":
                return self._issue_update(variables)
            if root == "viewer":
                return FakeResponse(200, {"data": {"viewer": {"id": BOT_USER_ID, "name": "bot"}}})
            if root == "team":
                nodes = [dict(s) for s in STATES.values()]
                return FakeResponse(
                    200, {"data": {"team": {**self.team, "states": {"nodes": nodes}}}}
                )
        return _error(f"Unknown operation {op or query[:40]!r}", "graphql error", 400)

    def _issue_page(self, identifier: str) -> FakeResponse:
        """The issue's web page: title, state, description and its comments."""
        with self.lock:
            issue = self.find(identifier)
            if issue is None:
                return FakeResponse(404, f"no issue {identifier}")
            page = HumanPage(
                kind=f"Issue {issue['identifier']}",
                title=str(issue["title"]),
                status=str(issue["state"].get("name", "?")),
                body=str(issue.get("description") or ""),
                fake="Linear fake",
                comments=[
                    (str(c["user"].get("name", "?")), str(c["body"]))
                    for c in issue["comments"]["nodes"]
                ],
                facts=[("labels", ", ".join(n["name"] for n in issue["labels"]["nodes"]))],
            )
        return page_response(page)

    def _authorized(self, request: FakeRequest) -> bool:
        value = request.headers.get("authorization", "").strip()
        if value.lower().startswith("bearer "):
            value = value[7:].strip()
        return value == self.token

    @staticmethod
    def _root_field(query: str) -> str | None:
        body = query.split("{", 1)[1] if "{" in query else query
        match = _ROOT.search(body)
        return match.group(1) if match else None

    # --- operations -----------------------------------------------------------------------------

    def _issues(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        args = _inline_args(query)
        first = _arg(variables, args, "first", 50)
        after = _arg(variables, args, "after", None)
        flt = variables.get("filter")
        if flt is None:
            flt = next((v for k, v in variables.items() if isinstance(v, dict)), {})
        matching = [i for i in self.issues.values() if _match_issue(i, flt or {})]
        matching.sort(key=lambda i: i["updatedAt"], reverse=True)
        offset = _decode_cursor(after) if after else 0
        first = max(1, min(int(first or 50), MAX_PAGE))
        page = matching[offset : offset + first]
        end = offset + len(page)
        info = {
            "hasNextPage": end < len(matching),
            "endCursor": _encode_cursor(end) if page else None,
        }
        return {"pageInfo": info, "nodes": [_public(i) for i in page]}

    def _issue(self, query: str, variables: dict[str, Any]) -> FakeResponse:
        key = variables.get("id") or _inline_args(query).get("id")
        issue = self.find(str(key)) if key else None
        if issue is None:
            return _error(f"Entity not found: Issue - {key}", "invalid input")
        return FakeResponse(200, {"data": {"issue": _public(issue)}})

    def _comment_create(self, query: str, variables: dict[str, Any]) -> FakeResponse:
        data = variables.get("input")
        if data is None:
            data = next((v for v in variables.values() if isinstance(v, dict)), None)
        if not isinstance(data, dict) or not data.get("issueId") or not data.get("body"):
            return _error("commentCreate needs input.issueId and input.body", "invalid input")
        issue = self.find(str(data["issueId"]))
        if issue is None:
            return _error(f"Entity not found: Issue - {data['issueId']}", "invalid input")
        comment = self._comment(issue, str(data["body"]), BOT_USER_ID, data.get("parentId"))
        out = {"id": comment["id"], "url": comment["url"], "body": comment["body"]}
        return FakeResponse(200, {"data": {"commentCreate": {"success": True, "comment": out}}})

    def _comment(
        self, issue: dict[str, Any], body: str, user_id: str, parent: str | None = None
    ) -> dict[str, Any]:
        with self.lock:
            cid = f"comment-{uuid.uuid4().hex[:12]}"
            now = self._tick()
            comment = {
                "id": cid,
                "body": body,
                "url": f"{issue['url']}#comment-{cid}",
                "createdAt": now,
                "updatedAt": now,
                "parentId": parent,
                "user": {"id": user_id, "name": "bot" if user_id == BOT_USER_ID else "Ana"},
                "botActor": {"name": "veranda"} if user_id == BOT_USER_ID else None,
            }
            issue["comments"]["nodes"].append(comment)
            return comment

    def _issue_update(self, variables: dict[str, Any]) -> FakeResponse:
        issue = self.find(str(variables.get("id") or ""))
        data = variables.get("input") or {}
        if issue is None or not isinstance(data, dict):
            return _error("issueUpdate needs an existing id and an input", "invalid input")
        state = next((s for s in STATES.values() if s["id"] == data.get("stateId")), None)
        if state is not None:
            issue["state"] = {k: v for k, v in state.items() if k != "position"}
        issue["updatedAt"] = self._tick()
        return FakeResponse(
            200, {"data": {"issueUpdate": {"success": True, "issue": _public(issue)}}}
        )


# --- filter evaluation ---------------------------------------------------------------------------


def _public(issue: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in issue.items() if k not in ("assignee", "delegate")} | {
        "assignee": issue.get("assignee"),
        "delegate": issue.get("delegate"),
    }


def _compare(value: Any, op: str, expected: Any) -> bool:
    left, right = _parse_time(value), _parse_time(expected)
    if left is None or right is None:
        left, right = value, expected
    if op == "eq":
        return left == right
    if op == "neq":
        return left != right
    if op == "in":
        return value in (expected or [])
    if op == "nin":
        return value not in (expected or [])
    if op == "eqIgnoreCase":
        return isinstance(value, str) and value.lower() == str(expected).lower()
    if left is None or right is None:
        return False
    try:
        return {"gt": left > right, "gte": left >= right, "lt": left < right, "lte": left <= right}[
            op
        ]
    except (KeyError, TypeError):
        return False


_OPS = frozenset({"eq", "neq", "in", "nin", "gt", "gte", "lt", "lte", "eqIgnoreCase"})


def _match_value(value: Any, flt: Any) -> bool:
    """One comparator dict against a scalar, or a nested filter against an object/list."""
    if not isinstance(flt, dict):
        return True
    for key, expected in flt.items():
        if key in _OPS:
            ok = _compare(value, key, expected)
        elif key == "null":
            ok = (value is None) == bool(expected)
        elif key == "isMe":
            ok = _compare(
                isinstance(value, dict) and value.get("id") == BOT_USER_ID, "eq", True
            ) == (
                (expected or {}).get("eq", True) if isinstance(expected, dict) else bool(expected)
            )
        elif key in ("some", "every"):
            items = value.get("nodes", []) if isinstance(value, dict) else value or []
            hits = [_match_value(item, expected) for item in items]
            ok = any(hits) if key == "some" else all(hits)
        elif key == "or":
            ok = any(_match_value(value, sub) for sub in expected or [])
        elif key == "and":
            ok = all(_match_value(value, sub) for sub in expected or [])
        elif isinstance(value, dict):
            ok = _match_value(value.get(key), expected)
        else:
            ok = False
        if not ok:
            return False
    return True


def _match_issue(issue: dict[str, Any], flt: dict[str, Any]) -> bool:
    return _match_value(issue, flt)


def _encode_cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode()


def _decode_cursor(cursor: str) -> int:
    try:
        return int(base64.b64decode(cursor).decode().split(":", 1)[1])
    except (ValueError, IndexError):
        return 0


_INLINE = re.compile(r"\b(first|after|id)\s*:\s*(\"[^\"]*\"|\d+|\$\w+)")


def _inline_args(query: str) -> dict[str, Any]:
    """Literal arguments written into the query (``first:50``); variables are resolved later."""
    out: dict[str, Any] = {}
    for name, raw in _INLINE.findall(query):
        if raw.startswith("$"):
            out[name] = raw
        elif raw.startswith('"'):
            out[name] = raw.strip('"')
        else:
            out[name] = int(raw)
    return out


def _arg(variables: dict[str, Any], inline: dict[str, Any], name: str, default: Any) -> Any:
    raw = inline.get(name)
    if isinstance(raw, str) and raw.startswith("$"):
        return variables.get(raw[1:], default)
    if raw is not None:
        return raw
    return variables.get(name, default)
