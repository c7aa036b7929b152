"""The credential proxy: an agent's only way out of its sandbox, holding the key it never sees.

The worker starts one per agent turn, outside the sandbox. It listens on a unix socket in a
fresh ``0700`` folder that is bound read-only into the sandbox, where a bridge (``bridge.py``)
relays the CLI's loopback connections to it. Per request it:

* refuses ``CONNECT``, protocol upgrades (WebSockets), an absolute target on another origin, a
  path outside the base URL's prefix, and oversized or slow requests, with a clear 4xx/5xx;
* checks that every declared key place the request uses (``egress.KeyCarrier``) holds this
  turn's placeholder, and that at least one does, then puts the real key there;
* forwards to the one upstream origin the vendor declared (or the configured base
  URL) with httpx, never following redirects, and streams the answer back as it arrives
  (server-sent events and chunked bodies alike), one request per connection;
* with a ``RequestMeter`` (a budgeted turn, ``sandbox.metering``): asks it before forwarding
  a model request, refusing with 402 when the budget is spent, and feeds it every answer's
  bytes, so the vendor's own usage reaches the ticket's ledger as each answer ends. An answer
  the CLI stops reading (it died, the turn was killed) is still read to its end for its usage
  (within ``MAX_RESPONSE_BYTES``), and closing the proxy waits ``METER_SETTLE_TIMEOUT_S`` for
  answers already coming. Metered answers are asked for uncompressed, to be readable.

Log lines name the method, the path without its query, and why; never a header value or a
query string, so neither the placeholder nor the key is ever logged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Final
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import httpx

from veranda_dagster.sandbox.egress import Substitution, Upstream
from veranda_dagster.sandbox.http_request import CHUNK_BYTES, Refused, Request, read_request
from veranda_dagster.sandbox.metering import RequestMeter, ResponseTally
from veranda_dagster.sandbox.unix_server import UnixSocketServer

log = logging.getLogger("veranda.proxy")

MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
"""One streamed answer; past it the stream is cut (the CLI sees a truncated response)."""
CLIENT_READ_TIMEOUT_S: Final = 60.0
"""Silence while reading a request from the bridge: the CLI writes requests at once."""
UPSTREAM_CONNECT_TIMEOUT_S: Final = 20.0
"""Reaching the model vendor's API: a reachable one connects in well under a second."""
UPSTREAM_READ_TIMEOUT_S: Final = 600.0
"""Silence between two chunks of an answer: a model may think for minutes before a token."""
MAX_CONCURRENT_REQUESTS: Final = 32
"""In flight at once for one turn (a CLI runs a few sub-agents in parallel at most)."""
MAX_DRAIN_BYTES: Final = 1024 * 1024
"""After a refusal, at most this much of the rest of the request is read and dropped (so the
client sees the answer rather than a reset); a larger body is cut off."""
DRAIN_TIMEOUT_S: Final = 1.0
"""After a refusal, how much (and how long) of the rest of the request is read and dropped."""
METER_SETTLE_TIMEOUT_S: Final = 10.0
"""On close, how long answers already coming from the vendor may still be read for their
usage: the vendor bills them whether or not the (killed) CLI reads them."""
BUDGET_REFUSED_STATUS: Final = 402
"""A model request refused because the turn's budget is spent: not retried by any CLI."""

SOCKET_NAME: Final = "proxy.sock"
HOP_BY_HOP: Final = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host",
        "content-length",
    }
)  # fmt: skip


MAX_REFUSALS_KEPT: Final = 200
"""Refusals one turn's record keeps (each is also logged as it happens); the rest are only
counted. The agent decides how many requests it makes, and each refusal costs it one
connection, so a turn could otherwise grow its record by the hundred thousand."""


@dataclass
class ProxyLog:
    """What this turn's proxy did, for the turn's own record and for tests: every refusal
    counted, the first ``MAX_REFUSALS_KEPT`` kept."""

    forwarded: int = 0
    refused: list[tuple[int, str]] | None = None
    refusals: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def refusal(self, status: int, line: str) -> None:
        with self._lock:  # requests are served on threads of their own
            self.refusals += 1
            if self.refused is None:
                self.refused = []
            if len(self.refused) < MAX_REFUSALS_KEPT:
                self.refused.append((status, line))


class CredentialProxy:
    """One turn's proxy; a context manager that serves on a thread until closed."""

    def __init__(
        self,
        upstream: Upstream,
        substitutions: Sequence[Substitution],
        *,
        transport: httpx.BaseTransport | None = None,
        meter: RequestMeter | None = None,
    ) -> None:
        if not substitutions:
            raise ValueError("a credential proxy needs at least one key to substitute")
        self.upstream = upstream
        self.substitutions = list(substitutions)
        self.record = ProxyLog()
        self.meter = meter
        self._answering = 0
        self._settled = threading.Condition()
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT_REQUESTS)
        self._client = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(UPSTREAM_READ_TIMEOUT_S, connect=UPSTREAM_CONNECT_TIMEOUT_S),
            follow_redirects=False,
            trust_env=False,
        )
        self.folder = Path(tempfile.mkdtemp(prefix="veranda-proxy-"))
        self.folder.chmod(0o700)
        self.socket_path = self.folder / SOCKET_NAME
        self._server: UnixSocketServer | None = None

    def __enter__(self) -> CredentialProxy:
        self._server = UnixSocketServer(self.socket_path, self, "veranda-proxy")
        self._server.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._settle()
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._client.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _settle(self) -> None:
        """Wait (bounded) for answers being read to end, so their usage is metered."""
        with self._settled:
            self._settled.wait_for(lambda: self._answering == 0, METER_SETTLE_TIMEOUT_S)

    # --- one connection -------------------------------------------------------------------

    def serve(self, conn: socket.socket) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(conn, None, Refused(503, "too many requests in flight for one turn"))
            return
        try:
            conn.settimeout(CLIENT_READ_TIMEOUT_S)
            request: Request | None = None
            try:
                request = read_request(conn)
                method, url, headers = self.prepare(request)
                self._admit(request)
            except Refused as refusal:
                self._refuse(conn, request, refusal)
                return
            except (TimeoutError, OSError):
                self._refuse(conn, request, Refused(408, "request not read in time"))
                return
            self._forward(conn, request, method, url, headers)
        finally:
            self._slots.release()

    def prepare(self, request: Request) -> tuple[str, str, list[tuple[str, str]]]:
        """The upstream URL and headers with the real key in place, or ``Refused``."""
        if request.method == "CONNECT":
            raise Refused(405, "CONNECT is refused: the proxy forwards to one origin only")
        names = {name.lower() for name, _ in request.headers}
        if "upgrade" in names:
            raise Refused(501, "protocol upgrades (WebSockets) are refused: plain HTTP only")
        path = self._path(request.path)
        path, carried_q = self._substitute_query(path)
        headers, carried_h = self._substitute_headers(request.headers)
        if not (carried_q or carried_h):
            raise Refused(403, "the request carries no placeholder key where its vendor sends one")
        if self.meter is not None:  # a compressed answer could not be read for its usage
            headers = [(n, v) for n, v in headers if n.lower() != "accept-encoding"]
            headers.append(("accept-encoding", "identity"))
        return request.method, self.upstream.origin + path, headers

    def _admit(self, request: Request) -> None:
        """Refuses a model request the budget has no room for (``RequestMeter.admit``)."""
        if self.meter is None:
            return
        reason = self.meter.admit(request.path)
        if reason is not None:
            raise Refused(BUDGET_REFUSED_STATUS, reason)

    def _path(self, target: str) -> str:
        if target.startswith(("http://", "https://")):
            parts = urlsplit(target)
            if f"{parts.scheme}://{parts.netloc}".lower() != self.upstream.origin:
                raise Refused(403, "absolute target on another origin is refused")
            target = parts.path + (f"?{parts.query}" if parts.query else "")
        if not target.startswith("/"):
            raise Refused(400, "request target is not a path")
        bare = target.split("?", 1)[0]
        segments = unquote(bare).split("/")
        if any(seg in (".", "..") for seg in segments) or "\\" in unquote(bare):
            raise Refused(400, "dot segments are refused")
        prefix = self.upstream.prefix
        if prefix and not (bare == prefix or bare.startswith(prefix + "/")):
            raise Refused(403, "path outside the vendor's base URL")
        return target

    def _substitute_query(self, target: str) -> tuple[str, bool]:
        declared: dict[str, list[Substitution]] = {}
        for sub in self.substitutions:
            for carrier in sub.carriers:
                if carrier.query:
                    declared.setdefault(carrier.query, []).append(sub)
        if "?" not in target or not declared:
            return target, False
        path, query = target.split("?", 1)
        carried = False
        out: list[tuple[str, str]] = []
        for name, value in parse_qsl(query, keep_blank_values=True):
            if name in declared:
                match = next((s for s in declared[name] if value == s.placeholder), None)
                if match is None:
                    raise Refused(403, f"query {name} is not this turn's placeholder key")
                value, carried = match.real, True
            out.append((name, value))
        if not carried:  # nothing to put in: the query goes on exactly as the CLI wrote it
            return target, False
        return f"{path}?{urlencode(out)}", carried

    def _substitute_headers(
        self, headers: Iterable[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], bool]:
        declared: dict[str, list[tuple[str, Substitution]]] = {}
        for sub in self.substitutions:
            for carrier in sub.carriers:
                if carrier.header:
                    declared.setdefault(carrier.header, []).append((carrier.scheme, sub))
        out: list[tuple[str, str]] = []
        carried = False
        for name, value in headers:
            low = name.lower()
            if low in HOP_BY_HOP:
                continue
            if low in declared:
                value = self._replace(low, value.strip(), declared[low])
                carried = True
            out.append((name, value))
        return out, carried

    def _replace(self, name: str, value: str, options: list[tuple[str, Substitution]]) -> str:
        for scheme, sub in options:
            if value == scheme + sub.placeholder or (
                scheme and value.lower() == (scheme + sub.placeholder).lower()
            ):
                return scheme + sub.real
        raise Refused(403, f"header {name} is not this turn's placeholder key")

    def _forward(
        self,
        conn: socket.socket,
        request: Request,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
    ) -> None:
        tally: ResponseTally | None = None
        status = 0
        try:
            with self._client.stream(method, url, headers=headers, content=request.body) as resp:
                self.record.forwarded += 1
                status = resp.status_code
                tally = self._tally(request)
                self._relay(conn, request, method, resp, tally)
        except httpx.TimeoutException:
            self._refuse(conn, request, Refused(504, "upstream did not answer in time"))
        except (httpx.HTTPError, httpx.StreamError) as exc:
            self._refuse(conn, request, Refused(502, f"upstream failed: {type(exc).__name__}"))
        finally:
            if tally is not None:
                self._finish(tally, status)

    def _tally(self, request: Request) -> ResponseTally | None:
        if self.meter is None:
            return None
        tally = self.meter.tally(request.path, request.body)
        if tally is not None:
            with self._settled:
                self._answering += 1
        return tally

    def _finish(self, tally: ResponseTally, status: int) -> None:
        try:
            tally.finish(status)
        except Exception:  # a meter that fails must not take the proxy down with it
            log.exception("proxy: metering an answer failed")
        finally:
            with self._settled:
                self._answering -= 1
                self._settled.notify_all()

    def _relay(
        self,
        conn: socket.socket,
        request: Request,
        method: str,
        resp: httpx.Response,
        tally: ResponseTally | None,
    ) -> None:
        """The answer to the CLI as it arrives, every byte to the tally too; when the CLI
        goes away, the rest is still read for the tally (the vendor bills it anyway)."""
        listening = True
        try:
            _send_head(conn, resp)
        except OSError:
            listening = False
            log.info("proxy: client went away during %s", request.shown)
        if _bodyless(method, resp.status_code):
            return
        if not listening and tally is None:
            return
        sent = 0
        # a response the transport already read (a test's mock) has no stream left
        chunks = [resp.content] if resp.is_stream_consumed else resp.iter_raw()
        for chunk in chunks:
            sent += len(chunk)
            if sent > MAX_RESPONSE_BYTES:
                log.warning("proxy cut %s: answer past %d bytes", request.shown, sent)
                return  # no terminating chunk: the CLI sees a truncated answer
            if tally is not None:
                tally.feed(chunk)
            if listening and chunk:
                try:
                    conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                except OSError:
                    listening = False
                    log.info("proxy: client went away during %s", request.shown)
                    if tally is None:
                        return
        if listening:
            with contextlib.suppress(OSError):
                conn.sendall(b"0\r\n\r\n")

    def _refuse(self, conn: socket.socket, request: Request | None, refusal: Refused) -> None:
        shown = request.shown if request is not None else "(unread request)"
        line = f"proxy refused {shown}: {refusal.reason} ({refusal.status})"
        log.warning(line)
        self.record.refusal(refusal.status, line)
        body = json.dumps({"error": {"type": "veranda_proxy", "message": refusal.reason}})
        head = (
            f"HTTP/1.1 {refusal.status} Refused by veranda proxy\r\n"
            "content-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            conn.sendall(head.encode() + body.encode())
            _drain(conn)


def _drain(conn: socket.socket) -> None:
    """Read what the client is still sending (bounded) before the socket closes: closing with
    unread data resets the connection, and the client may lose the refusal it has not read."""
    conn.shutdown(socket.SHUT_WR)
    conn.settimeout(DRAIN_TIMEOUT_S)
    left = MAX_DRAIN_BYTES
    while left > 0 and (data := conn.recv(min(CHUNK_BYTES, left))):
        left -= len(data)


def _bodyless(method: str, status: int) -> bool:
    return method == "HEAD" or status in (204, 304) or 100 <= status < 200


def _send_head(conn: socket.socket, resp: httpx.Response) -> None:
    lines = [f"HTTP/1.1 {resp.status_code} {resp.reason_phrase or 'OK'}"]
    for name, value in resp.headers.multi_items():
        if name.lower() not in HOP_BY_HOP:
            lines.append(f"{name}: {value}")
    if not _bodyless(resp.request.method, resp.status_code):
        lines.append("transfer-encoding: chunked")
    lines.append("connection: close")
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
