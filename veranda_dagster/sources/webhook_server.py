"""The push intake's HTTP server: ``POST /webhooks/<source>`` -> verify -> the ticket's run.

A stdlib ``ThreadingHTTPServer`` bound to loopback by default (put a TLS proxy in front for the
sources to reach it). Each request is bounded before anything else: its body by
``MAX_WEBHOOK_BODY_BYTES`` (refused 413 from ``Content-Length`` before a byte is read), the read
by ``WEBHOOK_READ_TIMEOUT_S`` per socket read, the requests in flight by
``MAX_CONCURRENT_REQUESTS``; then the source's signature and timestamp
(``webhook_auth``), then what the event asks for (``webhook_events``), then the gate and the run
(``push_launch``). Answers are typed: 401 bad or stale signature, 400 malformed, 413 too big,
404 unknown source, 503 a source with no webhook secret set (its poll still brings its tickets),
500 the run could not be made (the error's type only; the poll picks the ticket up).
The log line of a request names the source, the answer and the ticket key, never a header, the
body or a secret. A redelivery (the same delivery id, remembered up to
``MAX_REMEMBERED_DELIVERIES``) is answered without asking the instance; any other repeat meets
the gate.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.sources.push_launch import Launch
from veranda_dagster.sources.webhook_auth import (
    MAX_WEBHOOK_BODY_BYTES,
    SECRET_ENV,
    VERIFIERS,
    WebhookMalformed,
    WebhookNotConfigured,
    WebhookRefused,
    WebhookTooLarge,
)
from veranda_dagster.sources.webhook_events import EVENTS, Scope

WEBHOOK_PATH_PREFIX = "/webhooks/"
WEBHOOK_READ_TIMEOUT_S = 10.0
"""Bound on reading one request (headers and body) from its socket."""
MAX_CONCURRENT_REQUESTS = 32
"""Requests handled at once; a connection past this is closed unanswered (the source retries),
so slow clients cannot pile up threads without bound."""
MAX_REMEMBERED_DELIVERIES = 4096
"""Delivery ids kept to answer a redelivery at once; the oldest is forgotten past this."""
DEFAULT_WEBHOOK_HOST = "127.0.0.1"
DEFAULT_WEBHOOK_PORT = 8790

log = logging.getLogger("veranda.intake.push")

Launcher = Callable[[str, str, tuple[str, ...]], Launch]
"""(source, ticket key, keys its text names) -> what the gate did (``PushLauncher.launch``)."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: Mapping[str, Any]


@dataclass
class WebhookReceiver:
    """Everything but the socket: a request's source, headers and body -> the answer."""

    secrets: Mapping[str, str]
    """Source name -> its webhook secret; a source missing here refuses (503)."""
    launch: Launcher
    scope: Scope = field(default_factory=Scope)
    clock: Callable[[], float] = time.time
    _seen: OrderedDict[str, None] = field(default_factory=OrderedDict)
    _seen_lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, source: str, headers: Mapping[str, str], body: bytes) -> Answer:
        try:
            return self._handle(source, {k.lower(): v for k, v in headers.items()}, body)
        except WebhookRefused as exc:
            return Answer(exc.status, {"error": type(exc).__name__, "detail": str(exc)})

    def _handle(self, source: str, headers: Mapping[str, str], body: bytes) -> Answer:
        if source not in VERIFIERS:
            return Answer(404, {"error": "unknown source", "detail": source[:40]})
        secret = self.secrets.get(source)
        if not secret:
            raise WebhookNotConfigured(
                f"{source} webhooks are off: set {SECRET_ENV[source]} (its poll still runs)"
            )
        if len(body) > MAX_WEBHOOK_BODY_BYTES:
            raise WebhookTooLarge(f"the body is over {MAX_WEBHOOK_BODY_BYTES} bytes")
        payload = VERIFIERS[source](secret, body, headers, self.clock())
        event = EVENTS[source](payload, headers, self.scope)
        if event.reply:
            return Answer(200, dict(event.reply))
        if event.delivery and not self._first_delivery(f"{source}:{event.delivery}"):
            return Answer(200, {"outcome": "duplicate delivery", "key": event.key})
        if event.key is None:
            return Answer(202, {"outcome": "ignored", "detail": event.reason})
        result = self.launch(source, event.key, event.mentions)
        if result.run_id is None:
            return Answer(200, {"outcome": "held", "key": event.key, "detail": result.reason})
        return Answer(201, {"outcome": "run created", "key": event.key, "run_id": result.run_id})

    def _first_delivery(self, delivery: str) -> bool:
        with self._seen_lock:
            if delivery in self._seen:
                return False
            self._seen[delivery] = None
            while len(self._seen) > MAX_REMEMBERED_DELIVERIES:
                self._seen.popitem(last=False)
            return True


def _handler(receiver: WebhookReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = WEBHOOK_READ_TIMEOUT_S
        server_version = "veranda-intake"

        def do_POST(self) -> None:
            source = self.path.split("?", 1)[0].removeprefix(WEBHOOK_PATH_PREFIX)
            if not self.path.startswith(WEBHOOK_PATH_PREFIX):
                self._answer(Answer(404, {"error": "not found"}), "-")
                return
            try:
                body = self._body()
            except WebhookRefused as exc:
                self._answer(
                    Answer(exc.status, {"error": type(exc).__name__, "detail": str(exc)}), source
                )
                return
            try:
                answer = receiver.handle(source, dict(self.headers.items()), body)
            except ConfigError as exc:  # the workspace cannot make the run: the operator's
                log.error("push intake: %s", exc)
                answer = Answer(500, {"error": "ConfigError", "detail": str(exc)})
            except Exception as exc:  # the poll is the backstop; answer with the type only
                log.error("push intake: %s failed: %s", source[:40], type(exc).__name__)
                answer = Answer(500, {"error": type(exc).__name__})
            self._answer(answer, source)

        def _body(self) -> bytes:
            raw = self.headers.get("Content-Length")
            if raw is None or not raw.strip().isdigit():
                raise WebhookMalformed("Content-Length is missing or not a number")
            length = int(raw)
            if length > MAX_WEBHOOK_BODY_BYTES:
                self.close_connection = True  # the body is never read
                raise WebhookTooLarge(f"the body is over {MAX_WEBHOOK_BODY_BYTES} bytes")
            body = self.rfile.read(length)
            if len(body) != length:
                raise WebhookMalformed("the body ended before Content-Length")
            return body

        def _answer(self, answer: Answer, source: str) -> None:
            data = json.dumps(answer.body).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            key = answer.body.get("key") or "-"
            log.info("push intake: %s %s -> %s", source[:40], key, answer.status)

        def log_message(self, format: str, *args: Any) -> None:
            """The stdlib's access log would print the request line; ``_answer`` logs instead."""

    return Handler


class _BoundedServer(ThreadingHTTPServer):
    """A thread per request, at most ``MAX_CONCURRENT_REQUESTS`` at once."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT_REQUESTS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def make_server(
    receiver: WebhookReceiver, host: str = DEFAULT_WEBHOOK_HOST, port: int = DEFAULT_WEBHOOK_PORT
) -> ThreadingHTTPServer:
    """The bound server (``port`` 0 picks a free one: ``server.server_address``); the caller
    runs ``serve_forever`` and ``shutdown``s it."""
    return _BoundedServer((host, port), _handler(receiver))


def secrets_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """Source -> its webhook secret, for the sources whose ``SECRET_ENV`` variable is set."""
    return {s: environ[v].strip() for s, v in SECRET_ENV.items() if environ.get(v, "").strip()}


def scope_from_env(environ: Mapping[str, str]) -> Scope:
    """The poll's filters, read from the variables the sources' resources read them from."""
    from veranda_dagster.settings import setting

    return Scope(
        linear_bot_user_id=setting("LINEAR_BOT_USER_ID", "", environ) or None,
        linear_label=setting("LINEAR_LABEL", "veranda", environ) or None,
        jira_label=setting("JIRA_LABEL", "veranda", environ) or None,
        jira_assignee=setting("JIRA_ASSIGNEE", "", environ) or None,
        jira_project=setting("JIRA_PROJECT", "", environ) or None,
    )
