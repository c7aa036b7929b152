"""A loopback HTTP server base for the fakes: one thread, a request log, faults on demand.

Each fake (Linear, Slack, GitHub, the scripted model) subclasses ``FakeHttpServer`` and
implements ``handle(request) -> FakeResponse``; this module owns the plumbing they share:
binding 127.0.0.1 on a free port, start/stop, a log of every request (auth values never
stored, only whether one was sent and whether it was accepted), and fault injection so a test
can make the next N requests to a path answer 429 with Retry-After, a 5xx or a 401 in the
service's own error shape (each fake supplies that shape in ``fault_body``).
"""

from __future__ import annotations

import fnmatch
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

MAX_FAKE_BODY_BYTES = 8 * 1024 * 1024
"""Largest request body a fake reads; anything bigger is answered 413 unread."""


@dataclass
class FakeRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Lower-cased names. Never logged as-is: ``LoggedRequest`` drops credential headers."""
    body: bytes = b""

    def json(self) -> Any:
        if not self.body:
            return {}
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None

    def form(self) -> dict[str, str]:
        parsed = parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)
        return {k: v[-1] for k, v in parsed.items()}

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def params(self) -> dict[str, Any]:
        """Query string, then a form or JSON body, merged (Slack accepts all three)."""
        merged: dict[str, Any] = {k: v[-1] for k, v in self.query.items()}
        ctype = self.headers.get("content-type", "")
        if self.body and "json" in ctype:
            data = self.json()
            if isinstance(data, dict):
                merged.update(data)
        elif self.body:
            merged.update(self.form())
        return merged

    def bearer(self) -> str | None:
        """The token from ``Authorization: Bearer x`` (or the raw header value)."""
        value = self.headers.get("authorization", "").strip()
        if not value:
            return None
        scheme, _, rest = value.partition(" ")
        return rest.strip() if scheme.lower() in ("bearer", "token") and rest else value


@dataclass
class FakeResponse:
    status: int = 200
    body: Any = None
    """dict/list -> JSON; str/bytes sent as-is; None -> empty; a ``Streamed`` body is written
    chunk by chunk as it is produced (a hostile answer: huge, or dripping)."""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None

    def encode(self) -> tuple[bytes, str]:
        if isinstance(self.body, Streamed):
            raise TypeError("a streamed body is written by chunks, not encoded whole")
        if isinstance(self.body, bytes):
            return self.body, self.content_type or "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode(), self.content_type or "text/plain; charset=utf-8"
        if self.body is None:
            return b"", self.content_type or "application/json"
        return json.dumps(self.body).encode(), self.content_type or "application/json"


@dataclass
class Streamed:
    """A body produced lazily and sent with chunked transfer encoding: ``chunks`` yields each
    piece when it is due, so a 300 MB answer never exists at once and a slow one can sleep
    between bytes. The writer stops when the client hangs up."""

    chunks: Callable[[], Iterator[bytes]]
    content_type: str = "application/json"


def huge_json_list(total_bytes: int, chunk: int = 1 << 20) -> Streamed:
    """A JSON list of ``total_bytes`` (a valid prefix all the way), produced a chunk at a time."""

    def chunks() -> Iterator[bytes]:
        sent = 1
        yield b"["
        item = b'{"id":1,"body":"' + b"x" * 200 + b'"},'
        piece = item * max(1, chunk // len(item))
        while sent < total_bytes:
            yield piece
            sent += len(piece)
        yield b'{"id":2}]'

    return Streamed(chunks)


def dripping(body: bytes, every_s: float) -> Streamed:
    """``body`` one byte at a time, ``every_s`` apart: never slow enough for a read timeout."""

    def chunks() -> Iterator[bytes]:
        for byte in body:
            yield bytes([byte])
            time.sleep(every_s)

    return Streamed(chunks)


@dataclass
class LoggedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    body: bytes
    status: int
    authorized: bool
    """A credential header was sent (its value is not kept)."""
    at: float = field(default_factory=time.time)
    fault: str | None = None

    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else {}
        except (ValueError, UnicodeDecodeError):
            return None


@dataclass
class Fault:
    pattern: str
    """A request path, or an ``fnmatch`` pattern (``/repos/*/pulls``)."""
    status: int
    remaining: int
    retry_after: float | None = None
    method: str | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    answer: Callable[[], FakeResponse] | None = None
    """Builds the whole answer (a ``Streamed`` one is made fresh for each request)."""

    def matches(self, method: str, path: str) -> bool:
        if self.method and self.method.upper() != method.upper():
            return False
        return path == self.pattern or fnmatch.fnmatchcase(path, self.pattern)


_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "cookie")

SHUTDOWN_POLL_S = 0.05
"""How often the serving thread checks for ``stop`` (``serve_forever``'s default is 0.5 s, which
``shutdown`` waits out: half a second per fake, six per ``SimWorld``, on every test's teardown)."""


class LoopbackServer:
    """A threaded HTTP server on a free loopback port, served from a daemon thread while in a
    ``with`` block: the lifecycle every fake server of the simulation (and of the tests)
    shares. A subclass passes the request handler class its own server answers with."""

    name = "loopback"

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                args=(SHUTDOWN_POLL_S,),
                name=f"{self.name}-fake",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FakeHttpServer(LoopbackServer):
    """Subclass and implement ``handle``; use as ``with Fake() as f: ... f.base_url``."""

    name = "fake"

    def __init__(self) -> None:
        self.requests: list[LoggedRequest] = []
        self.faults: list[Fault] = []
        self.lock = threading.RLock()
        super().__init__(_handler_for(self))

    # --- faults ---------------------------------------------------------------------------------

    def fail_next(
        self,
        path: str,
        status: int,
        times: int = 1,
        *,
        retry_after: float | None = None,
        method: str | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The next ``times`` requests matching ``path`` answer ``status`` in this service's
        error shape (``body`` overrides it); 429s carry ``Retry-After`` when given."""
        fault = Fault(path, status, times, retry_after, method, body, dict(headers or {}))
        with self.lock:
            self.faults.append(fault)
        return fault

    def answer_next(
        self,
        path: str,
        answer: Callable[[], FakeResponse],
        times: int = 1,
        *,
        method: str | None = None,
    ) -> Fault:
        """The next ``times`` requests matching ``path`` get ``answer()``: a hostile answer
        (``huge_json_list``, ``dripping``, bad JSON) in place of the real one."""
        fault = Fault(path, 0, times, method=method, answer=answer)
        with self.lock:
            self.faults.append(fault)
        return fault

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.remaining > 0 and fault.matches(method, path):
                    fault.remaining -= 1
                    return fault
            self.faults = [f for f in self.faults if f.remaining > 0]
        return None

    def fault_body(self, status: int) -> Any:
        """This service's error body for an injected status; subclasses override."""
        return {"error": f"injected HTTP {status}"}

    def _fault_response(self, fault: Fault) -> FakeResponse:
        if fault.answer is not None:
            return fault.answer()
        headers = dict(fault.headers)
        if fault.retry_after is not None:
            headers["retry-after"] = f"{fault.retry_after:g}"
        body = fault.body if fault.body is not None else self.fault_body(fault.status)
        return FakeResponse(fault.status, body, headers)

    # --- log ------------------------------------------------------------------------------------

    def requests_to(self, pattern: str, method: str | None = None) -> list[LoggedRequest]:
        with self.lock:
            return [
                r
                for r in self.requests
                if (method is None or r.method == method.upper())
                and (r.path == pattern or fnmatch.fnmatchcase(r.path, pattern))
            ]

    # --- dispatch -------------------------------------------------------------------------------

    def handle(self, request: FakeRequest) -> FakeResponse:
        raise NotImplementedError

    def dispatch(self, request: FakeRequest) -> FakeResponse:
        fault = self._take_fault(request.method, request.path)
        if fault is not None:
            response = self._fault_response(fault)
            self._log(request, response.status, f"injected {response.status}")
            return response
        try:
            response = self.handle(request)
        except Exception as exc:  # a fake bug must surface as a 500, not a hung client
            response = FakeResponse(500, {"message": f"{self.name} fake error: {exc}"})
        self._log(request, response.status, None)
        return response

    def _log(self, request: FakeRequest, status: int, fault: str | None) -> None:
        authorized = any(request.headers.get(h) for h in _CREDENTIAL_HEADERS)
        entry = LoggedRequest(
            request.method, request.path, request.query, request.body, status, authorized
        )
        entry.fault = fault
        with self.lock:
            self.requests.append(entry)


def _handler_for(server: FakeHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return  # the fake keeps its own log; stderr noise helps nobody

        def _serve(self) -> None:
            split = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_FAKE_BODY_BYTES:
                self._write(FakeResponse(413, {"message": "request body too large"}))
                self.close_connection = True
                return
            body = self.rfile.read(length) if length else b""
            request = FakeRequest(
                method=self.command,
                path=split.path,
                query=parse_qs(split.query, keep_blank_values=True),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
            self._write(server.dispatch(request))

        def _write(self, response: FakeResponse) -> None:
            if isinstance(response.body, Streamed):
                self._write_streamed(response, response.body)
                return
            payload, ctype = response.encode()
            try:
                self.send_response(response.status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                for key, value in response.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client went away (e.g. it was killed)

        def _write_streamed(self, response: FakeResponse, body: Streamed) -> None:
            self.close_connection = True
            try:
                self.send_response(response.status)
                self.send_header("content-type", body.content_type)
                self.send_header("transfer-encoding", "chunked")
                for key, value in response.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                for chunk in body.chunks():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                return  # the client hung up: what a bounded reader does

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _serve

    return Handler


def paginate(items: list[Any], page: int, per_page: int) -> tuple[list[Any], bool]:
    """Slice for 1-based ``page``; returns (items on the page, whether a next page exists)."""
    page = max(1, page)
    per_page = max(1, min(per_page, 100))
    start = (page - 1) * per_page
    return items[start : start + per_page], start + per_page < len(items)
