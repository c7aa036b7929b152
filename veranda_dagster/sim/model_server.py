"""The scripted model server: Anthropic Messages on 127.0.0.1, answering from ``scripted_agent``.

``POST /v1/messages`` (non-streaming) reads the user prompt and system text, detects the seat,
and answers with the seat's scripted text plus ``tool_use`` blocks for its file edits, with a
deterministic ``usage`` (about four characters a token). Keys are checked the way the vendor
does: ``x-api-key`` (API key mode) or ``Authorization: Bearer`` (OAuth/login mode), so a test
can ``revoke`` one mode's key mid-run and watch the other mode take over. It counts calls per
role, can fail a role's next calls with a status, and can ``block`` a role until released, so
a test can kill the run worker while the implementer's turn is in flight.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any

from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse
from veranda_dagster.sim.scripted_agent import detect_role, script_reply

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
ERROR_MESSAGES = {
    401: "invalid x-api-key",
    429: "Number of request tokens has exceeded your rate limit",
    500: "Internal server error",
    529: "Overloaded",
}
MAX_BLOCK_S = 300.0
"""A blocked call is released after this long even if the test never releases it."""


def anthropic_error(status: int, message: str | None = None) -> dict[str, Any]:
    kind = ERROR_TYPES.get(status, "api_error")
    return {
        "type": "error",
        "error": {"type": kind, "message": message or ERROR_MESSAGES.get(status, "error")},
    }


@dataclass
class ModelCallRecord:
    role: str
    model: str | None
    credential: str
    """Which kind of credential came: ``api_key``, ``oauth`` or ``none`` (never the value)."""
    status: int
    credential_ref: str = ""
    """Which accepted credential it was, by position (``api_key:0``, ``oauth:1``), or
    ``unknown``: enough to tell modes apart without keeping a secret in the log."""


def _prompt_and_system(body: dict[str, Any]) -> tuple[str, str]:
    def text_of(content: Any) -> str:
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        return ""

    messages = body.get("messages") or []
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    prompt = text_of(users[0].get("content")) if users else ""
    return prompt, text_of(body.get("system"))


class ScriptedModelServer(FakeHttpServer):
    name = "model"

    def __init__(self, api_keys: tuple[str, ...] = (), oauth_tokens: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.api_keys = set(api_keys)
        self.oauth_tokens = set(oauth_tokens)
        """Accepted credentials; both empty = any non-empty credential is accepted."""
        self.revoked: set[str] = set()
        self.calls: list[ModelCallRecord] = []
        self.rounds: Counter[str] = Counter()
        self._role_faults: dict[str, list[int]] = {}
        self._blocked: dict[str, threading.Event] = {}
        self.arrived: dict[str, threading.Event] = {}

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    # --- test controls --------------------------------------------------------------------------

    def revoke(self, credential: str) -> None:
        with self.lock:
            self.revoked.add(credential)

    def fail_role(self, role: str, status: int, times: int = 1) -> None:
        with self.lock:
            self._role_faults.setdefault(role, []).extend([status] * times)

    def block(self, role: str) -> threading.Event:
        """Hold every call for ``role`` until ``release(role)``; returns its arrival event."""
        with self.lock:
            self._blocked[role] = threading.Event()
            return self.arrival(role)

    def release(self, role: str) -> None:
        with self.lock:
            event = self._blocked.pop(role, None)
        if event is not None:
            event.set()

    def arrival(self, role: str) -> threading.Event:
        with self.lock:
            return self.arrived.setdefault(role, threading.Event())

    def calls_by_role(self, ok_only: bool = False) -> Counter[str]:
        with self.lock:
            return Counter(c.role for c in self.calls if not ok_only or c.status == 200)

    # --- dispatch -------------------------------------------------------------------------------

    def fault_body(self, status: int) -> Any:
        return anthropic_error(status)

    def _credential(self, request: FakeRequest) -> tuple[str, str]:
        key = request.headers.get("x-api-key", "").strip()
        if key:
            return "api_key", key
        bearer = request.bearer() or ""
        return ("oauth", bearer) if bearer else ("none", "")

    def _accepts(self, kind: str, value: str) -> bool:
        if not value or value in self.revoked:
            return False
        if not self.api_keys and not self.oauth_tokens:
            return True
        return value in (self.api_keys if kind == "api_key" else self.oauth_tokens)

    def credential_ref(self, kind: str, value: str) -> str:
        known = sorted(self.api_keys if kind == "api_key" else self.oauth_tokens)
        return f"{kind}:{known.index(value)}" if value in known else "unknown"

    def handle(self, request: FakeRequest) -> FakeResponse:
        path = request.path.rstrip("/")
        if request.method == "GET" and path.endswith("/v1/models"):
            return FakeResponse(200, {"data": [{"id": "claude-sonnet-sim", "type": "model"}]})
        if request.method != "POST" or not path.endswith("/v1/messages"):
            return FakeResponse(404, anthropic_error(404, f"no route {request.path}"))
        body = request.json()
        if not isinstance(body, dict):
            return FakeResponse(400, anthropic_error(400, "body is not a JSON object"))
        prompt, system = _prompt_and_system(body)
        role = detect_role(prompt, system)
        kind, value = self._credential(request)
        model = body.get("model")
        self.arrival(role).set()
        with self.lock:
            gate = self._blocked.get(role)
        if gate is not None:
            gate.wait(MAX_BLOCK_S)
        with self.lock:
            status = 200
            if not self._accepts(kind, value):
                status = 401
            elif self._role_faults.get(role):
                status = self._role_faults[role].pop(0)
            self.calls.append(
                ModelCallRecord(role, model, kind, status, self.credential_ref(kind, value))
            )
            if status != 200:
                return FakeResponse(status, anthropic_error(status))
            self.rounds[role] += 1
            reply = script_reply(role, prompt, self.rounds[role], system)
        return FakeResponse(200, self._message(reply, model or "claude-sonnet-sim", prompt, system))

    @staticmethod
    def _message(reply: Any, model: str, prompt: str, system: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
        for edit in reply.edits:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:20]}",
                    "name": edit["name"],
                    "input": dict(edit["input"]),
                }
            )
        out_chars = len(reply.text) + sum(len(str(e["input"])) for e in reply.edits)
        return {
            "id": f"msg_{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if reply.edits else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": max(1, (len(prompt) + len(system)) // 4),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": max(1, out_chars // 4),
            },
        }
