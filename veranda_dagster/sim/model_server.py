"""The scripted model server: every vendor wire on 127.0.0.1, playing ``scripted_agent`` as an
agent's tool loop, so the real vendor CLIs (and the ``veranda-sim-agent`` stand-in) can do whole
tickets offline.

It speaks Anthropic Messages, OpenAI Responses, Chat Completions and the Gemini API
(``wire_*``), and is stateless about conversations: the step of a turn is read from the request
itself (how many assistant replies or function calls it already holds). Step 0 starts a seat's
turn: the server reads the seat from the prompt's ``Role:`` line, counts a round for it, and
answers the first of the seat's actions as a tool call in the CLI's own vocabulary
(``renderers``); each follow-up carries the tool's result back and gets the next action; the
step after the last action answers the seat's text and ends the turn. A conversation that goes
on past ``MAX_SCRIPTED_STEPS`` gets a clear error instead of another reply, so a CLI can never
loop on a script until its time bound. A work seat of a ticket the script has no honest answer
for gets a 400 saying so (``scripted_seats.refusal``). Side calls (opencode's and Grok's title
calls, Gemini's router) are answered without spending a round. It streams whenever a request asks.

Keys are checked the way each vendor does (``x-api-key``, ``Authorization: Bearer``,
``x-goog-api-key``), so a test can ``revoke`` one mode's key mid-run and watch the other mode
take over. Faults are per seat and, optionally, per step: ``fail_role`` answers a status (429,
5xx, ...), ``block`` holds requests until ``release`` (a hang), at a turn's start or on one of
its follow-ups. ``calls`` logs every request of a turn; ``calls_by_role`` counts turn starts,
which is what the product calls a model call. ``billed`` is the server's own invoice: the usage
of every answer it produced (turn steps and side calls alike), priced with the product's rate
table, so a test can hold the product's spend ledger against what "the vendor" billed.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from veranda_dagster.domain.core.models import Usage
from veranda_dagster.sim import wire_anthropic, wire_gemini, wire_openai
from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse
from veranda_dagster.sim.model_listing import model_listing
from veranda_dagster.sim.renderers import ToolCall, render_actions
from veranda_dagster.sim.scripted_agent import detect_role
from veranda_dagster.sim.scripted_frontend import fill
from veranda_dagster.sim.scripted_seats import refusal, script_reply
from veranda_dagster.sim.wire import CHARS_PER_TOKEN, Conversation, StepAnswer, from_schema

MAX_BLOCK_S = 300.0
"""A blocked call is released after this long even if the test never releases it."""
MAX_SCRIPTED_STEPS: Final = 16
"""Requests one seat's conversation may make; the longest script (the frontend implementer:
load the browser tools, start the dev server, look, edit, look again, a stubbed check, the
tests, answer) needs twelve, so a CLI still asking at sixteen is looping and gets an error."""
MAX_RECORDED_RESULT_CHARS = 4_000
MAX_RECORDED_INPUT_CHARS = 1_000
"""What the log keeps of a tool's result: its start and its end (a test run's summary)."""
DEFAULT_MODEL = "claude-sonnet-sim"
SIDE_TEXT = "Veranda sim session"


def fill_call(call: ToolCall, seen: list[str]) -> ToolCall:
    """``call`` with the ``{{name}}`` placeholders of its string arguments filled from what the
    turn's tools returned so far (the dev server's URL, for one)."""
    return ToolCall(
        call.name, {k: fill(v, seen) if isinstance(v, str) else v for k, v in call.args.items()}
    )


def _clip(text: str, limit: int = MAX_RECORDED_RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[: limit // 3]} … {text[-(limit - limit // 3) :]}"


@dataclass(frozen=True)
class Wire:
    name: str
    parse: Callable[[str, dict[str, Any], int], Conversation]
    answer: Callable[[Conversation, StepAnswer, str], FakeResponse]
    error: Callable[[int, str | None], FakeResponse]
    credential: Callable[[FakeRequest], tuple[str, str]]


WIRES = {
    "anthropic": Wire(
        "anthropic",
        lambda _path, body, n: wire_anthropic.parse(body, n),
        wire_anthropic.answer,
        wire_anthropic.error,
        wire_anthropic.credential,
    ),
    "responses": Wire(
        "responses",
        lambda _path, body, n: wire_openai.parse_responses(body, n),
        wire_openai.answer_responses,
        wire_openai.error,
        wire_openai.credential,
    ),
    "chat": Wire(
        "chat",
        lambda _path, body, n: wire_openai.parse_chat(body, n),
        wire_openai.answer_chat,
        wire_openai.error,
        wire_openai.credential,
    ),
    "gemini": Wire(
        "gemini", wire_gemini.parse, wire_gemini.answer, wire_gemini.error, wire_gemini.credential
    ),
}


def wire_of(path: str) -> str | None:
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/chat/completions"):
        return "chat"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return None


@dataclass
class ModelCallRecord:
    role: str
    model: str | None
    credential: str
    """Which kind of credential came: ``api_key``, ``oauth`` (a bearer token on the Anthropic
    or Gemini wire) or ``none``; never the value."""
    status: int
    credential_ref: str = ""
    """Which accepted credential it was, by position (``api_key:0``, ``oauth:1``), or
    ``unknown``: enough to tell modes apart without keeping a secret in the log."""
    step: int = 0
    """0 starts a turn; n > 0 is the n-th follow-up, carrying tool results back."""
    wire: str = "anthropic"
    stream: bool = False
    tool_results: tuple[str, ...] = ()
    """Each tool result the request carried back (start and end of a long one)."""
    tool_call: str | None = None
    """The tool this answer called, or None when it ended the turn."""
    tool_input: str = ""
    """The arguments of that call (JSON, start and end of a long one)."""


@dataclass(frozen=True)
class BilledAnswer:
    """One answer the server produced and would bill for: who asked, on which wire, for
    which model, and the usage that answer reported."""

    role: str
    wire: str
    model: str
    usage: Usage
    usd: float


@dataclass
class _Gate:
    step: int | None
    released: threading.Event
    arrived: threading.Event


class ScriptedModelServer(FakeHttpServer):
    name = "model"

    def __init__(self, api_keys: tuple[str, ...] = (), oauth_tokens: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.api_keys = set(api_keys)
        self.oauth_tokens = set(oauth_tokens)
        """Accepted credentials; both empty = any non-empty credential is accepted."""
        self.revoked: set[str] = set()
        self.calls: list[ModelCallRecord] = []
        self.side_calls: list[tuple[str, str, int]] = []
        """(wire, why, status) of each side call."""
        self.rounds: Counter[str] = Counter()
        self.billed: list[BilledAnswer] = []
        self._role_faults: dict[str, list[tuple[int, int | None]]] = {}
        self._gates: dict[str, _Gate] = {}
        self.arrived: dict[str, threading.Event] = {}

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    # --- test controls --------------------------------------------------------------------------

    def revoke(self, credential: str) -> None:
        with self.lock:
            self.revoked.add(credential)

    def fail_role(self, role: str, status: int, times: int = 1, step: int | None = None) -> None:
        """The next ``times`` requests of ``role`` (at ``step`` only, if given) answer
        ``status`` in the wire's own error shape."""
        with self.lock:
            self._role_faults.setdefault(role, []).extend([(status, step)] * times)

    def block(self, role: str, step: int | None = None) -> threading.Event:
        """Hold ``role``'s requests (at ``step`` only, if given) until ``release(role)``: a hang
        as the CLI sees it. Returns the event set when a held request arrives."""
        with self.lock:
            gate = _Gate(step, threading.Event(), threading.Event())
            self._gates[role] = gate
            return gate.arrived

    def release(self, role: str) -> None:
        with self.lock:
            gate = self._gates.pop(role, None)
        if gate is not None:
            gate.released.set()

    def arrival(self, role: str) -> threading.Event:
        with self.lock:
            return self.arrived.setdefault(role, threading.Event())

    def calls_by_role(self, ok_only: bool = False) -> Counter[str]:
        """Turn starts per seat (refused ones too, unless ``ok_only``): one per model call."""
        with self.lock:
            return Counter(
                c.role for c in self.calls if c.step == 0 and (not ok_only or c.status == 200)
            )

    def billed_usd(self, role: str | None = None) -> float:
        """What the server billed (for ``role`` only, if given), to the micro-dollar."""
        with self.lock:
            return round(sum(b.usd for b in self.billed if role in (None, b.role)), 6)

    def _bill(self, role: str, wire: Wire, model: str, answer: StepAnswer) -> None:
        from veranda_dagster.vendors.cost import turn_usd  # the vendors import much

        usage = Usage(input=answer.input_tokens, output=answer.output_tokens)
        usd = turn_usd(model, usage) or 0.0
        with self.lock:
            self.billed.append(BilledAnswer(role, wire.name, model, usage, usd))

    def conversation(self, role: str) -> list[ModelCallRecord]:
        with self.lock:
            return [c for c in self.calls if c.role == role]

    # --- credentials ----------------------------------------------------------------------------

    def _accepts(self, kind: str, value: str) -> bool:
        if not value or value in self.revoked:
            return False
        if not self.api_keys and not self.oauth_tokens:
            return True
        if kind == "oauth":
            return value in self.oauth_tokens
        return value in (self.api_keys if kind == "api_key" else set())

    def credential_ref(self, kind: str, value: str) -> str:
        known = sorted(self.api_keys if kind == "api_key" else self.oauth_tokens)
        return f"{kind}:{known.index(value)}" if value in known else "unknown"

    # --- dispatch -------------------------------------------------------------------------------

    def fault_body(self, status: int) -> Any:
        return wire_anthropic.anthropic_error(status)

    def handle(self, request: FakeRequest) -> FakeResponse:
        path = request.path.rstrip("/")
        if request.method == "GET" and path.endswith("/models"):
            return FakeResponse(200, model_listing(DEFAULT_MODEL))
        if request.method != "POST":
            return wire_anthropic.error(404, f"no route {request.path}")
        body = request.json()
        if not isinstance(body, dict):
            return wire_anthropic.error(400, "body is not a JSON object")
        tokens = max(1, len(request.body) // CHARS_PER_TOKEN)
        if path.endswith("/messages/count_tokens"):
            return FakeResponse(200, {"input_tokens": tokens})
        if path.endswith(":countTokens"):
            return FakeResponse(200, {"totalTokens": tokens})
        name = wire_of(path)
        if name is None:
            return wire_anthropic.error(404, f"no route {request.path}")
        wire = WIRES[name]
        conv = wire.parse(path, body, len(request.body))
        if conv.side_call:
            return self._side_call(wire, conv, request)
        return self._turn_step(wire, conv, request)

    def _side_call(self, wire: Wire, conv: Conversation, request: FakeRequest) -> FakeResponse:
        kind, value = wire.credential(request)
        with self.lock:
            status = 200 if self._accepts(kind, value) else 401
            self.side_calls.append((wire.name, str(conv.side_call), status))
        if status != 200:
            return wire.error(status, None)
        if conv.schema is not None:
            reply = StepAnswer.costed(conv, json.dumps(from_schema(conv.schema)), None)
        else:
            reply = StepAnswer.costed(conv, "" if conv.forced_tool else SIDE_TEXT, conv.forced_tool)
        self._bill(f"side:{conv.side_call}", wire, conv.model or DEFAULT_MODEL, reply)
        return wire.answer(conv, reply, conv.model or DEFAULT_MODEL)

    def _hold(self, role: str, step: int) -> None:
        self.arrival(role).set()
        with self.lock:
            gate = self._gates.get(role)
        if gate is not None and gate.step in (None, step):
            gate.arrived.set()
            gate.released.wait(MAX_BLOCK_S)

    def _take_role_fault(self, role: str, step: int) -> int | None:
        faults = self._role_faults.get(role) or []
        for index, (status, at) in enumerate(faults):
            if at is None or at == step:
                del faults[index]
                return status
        return None

    def _turn_step(self, wire: Wire, conv: Conversation, request: FakeRequest) -> FakeResponse:
        role, step = detect_role(*conv.texts), conv.step
        kind, value = wire.credential(request)
        self._hold(role, step)
        with self.lock:
            status, message = 200, None
            if not self._accepts(kind, value):
                status = 401
            elif (fault := self._take_role_fault(role, step)) is not None:
                status = fault
            elif step >= MAX_SCRIPTED_STEPS:
                status = 400
                message = (
                    f"scripted model: the {role} conversation reached {MAX_SCRIPTED_STEPS} "
                    "steps without ending its turn; refusing to answer a looping client"
                )
            elif (refused := refusal(role, conv.prompt)) is not None:
                status, message = 400, refused
            if status == 200 and step == 0:
                self.rounds[role] += 1
            record = ModelCallRecord(
                role,
                conv.model,
                kind,
                status,
                self.credential_ref(kind, value),
                step=step,
                wire=wire.name,
                stream=conv.stream,
                tool_results=tuple(_clip(r) for r in conv.tool_results),
            )
            self.calls.append(record)
            round_no = max(1, self.rounds[role])
        if status != 200:
            return wire.error(status, message)
        reply = script_reply(role, conv.prompt, round_no, conv.system)
        calls = render_actions(reply.actions, conv.offered)
        if step < len(calls):
            call = fill_call(calls[step], conv.history)
            answer = StepAnswer.costed(conv, "", call)
            record.tool_call = call.name
            record.tool_input = _clip(json.dumps(call.args), MAX_RECORDED_INPUT_CHARS)
        else:
            answer = StepAnswer.costed(conv, fill(reply.text, conv.history), None)
        self._bill(role, wire, conv.model or DEFAULT_MODEL, answer)
        return wire.answer(conv, answer, conv.model or DEFAULT_MODEL)
