"""The credential proxy on its own: raw HTTP over its unix socket, httpx's mock as upstream.

Each test speaks to the real socket server the way the bridge relays a CLI's bytes, and reads
what the upstream transport received, so substitution, refusals, streaming and every bound are
the proxy's own behaviour, not a stub's.
"""

from __future__ import annotations

import logging
import socket
import stat
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.support.stalled_servers import silent, unconnectable
from veranda_dagster.sandbox import http_request
from veranda_dagster.sandbox import proxy as proxy_module
from veranda_dagster.sandbox.egress import (
    BEARER,
    QUERY_KEY,
    X_API_KEY,
    X_GOOG_API_KEY,
    Egress,
    Upstream,
)
from veranda_dagster.sandbox.proxy import CredentialProxy
from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse

REAL = "sk-ant-api03-REAL-key-never-in-a-sandbox-41d7"
ORIGIN = "https://api.vendor.test"


class Upstream_:
    """The upstream as httpx's transport: records what arrived, answers ``reply``."""

    def __init__(self, reply: httpx.Response | None = None) -> None:
        self.seen: list[httpx.Request] = []
        self.reply = reply

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.seen.append(request)
        return self.reply or httpx.Response(200, json={"ok": True})


def start(
    upstream: Upstream_,
    carriers: tuple = (X_API_KEY,),
    base_url: str = ORIGIN,
) -> tuple[CredentialProxy, str]:
    egress = Egress(base_url=base_url, keys={"KEY": REAL}, carriers={"KEY": carriers})
    subs = egress.substitutions()
    proxy = CredentialProxy(
        Upstream.of(base_url), subs, transport=httpx.MockTransport(upstream)
    ).__enter__()
    return proxy, subs[0].placeholder


@pytest.fixture
def upstream() -> Upstream_:
    return Upstream_()


@pytest.fixture
def running(upstream: Upstream_) -> Iterator[tuple[CredentialProxy, str]]:
    proxy, placeholder = start(upstream)
    yield proxy, placeholder
    proxy.close()


def ask(proxy: CredentialProxy, raw: bytes, timeout: float = 10) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(str(proxy.socket_path))
        conn.sendall(raw)
        out = b""
        while data := conn.recv(65536):
            out += data
        return out


def post(path: str, headers: dict[str, str], body: bytes = b"{}") -> bytes:
    head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:4000\r\ncontent-length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + b"\r\n" + body


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_the_placeholder_becomes_the_real_key_only_in_its_declared_header(running, upstream):
    proxy, placeholder = running
    answer = ask(proxy, post("/v1/messages?beta=true", {"x-api-key": placeholder}, b'{"a":1}'))
    assert status(answer) == 200 and answer.endswith(b'{"ok":true}\r\n0\r\n\r\n')
    (sent,) = upstream.seen
    assert str(sent.url) == f"{ORIGIN}/v1/messages?beta=true"
    assert sent.headers["x-api-key"] == REAL and sent.content == b'{"a":1}'
    assert sent.headers["host"] == "api.vendor.test"  # the upstream's, not the bridge's


def test_bearer_and_query_carriers(upstream):
    proxy, placeholder = start(upstream, (BEARER, X_GOOG_API_KEY, QUERY_KEY))
    try:
        bearer = ask(proxy, post("/v1/x", {"Authorization": f"Bearer {placeholder}"}))
        query = ask(proxy, post(f"/v1beta/m:generate?alt=sse&key={placeholder}", {}))
    finally:
        proxy.close()
    assert status(bearer) == 200 and status(query) == 200
    assert upstream.seen[0].headers["authorization"] == f"Bearer {REAL}"
    assert upstream.seen[1].url.params["key"] == REAL
    assert upstream.seen[1].url.params["alt"] == "sse"


@pytest.mark.parametrize(
    ("raw", "code", "why"),
    [
        (post("/v1/messages", {"x-api-key": "sk-ant-api03-some-other-key"}), 403, "not this"),
        (post("/v1/messages", {}), 403, "no placeholder"),
        (b"CONNECT evil.test:443 HTTP/1.1\r\nhost: evil.test:443\r\n\r\n", 405, "CONNECT"),
        (post("http://evil.test/v1/messages", {"x-api-key": "{p}"}), 403, "another origin"),
        (post("/v1/../admin", {"x-api-key": "{p}"}), 400, "dot segments"),
        (post("/v1/%2e%2e/admin", {"x-api-key": "{p}"}), 400, "dot segments"),
        (post("/v1/ws", {"x-api-key": "{p}", "upgrade": "websocket"}), 501, "WebSockets"),
        (b"GET / HTTP/2.0\r\n\r\n", 505, "HTTP/1.x"),
    ],
)
def test_refused_requests_never_reach_the_upstream(running, upstream, raw, code, why, caplog):
    proxy, placeholder = running
    with caplog.at_level(logging.WARNING, logger="veranda.proxy"):
        answer = ask(proxy, raw.replace(b"{p}", placeholder.encode()))
    assert status(answer) == code and why.encode() in answer
    assert upstream.seen == []
    assert proxy.record.refused and proxy.record.refused[0][0] == code
    logged = caplog.text
    assert why in logged and REAL not in logged and placeholder not in logged


def test_a_path_outside_the_base_urls_prefix_is_refused(upstream):
    proxy, placeholder = start(upstream, base_url=f"{ORIGIN}/api/anthropic")
    try:
        inside = ask(proxy, post("/api/anthropic/v1/messages", {"x-api-key": placeholder}))
        outside = ask(proxy, post("/api/other/v1/messages", {"x-api-key": placeholder}))
        absolute_same = ask(
            proxy, post(f"{ORIGIN}/api/anthropic/v1/messages", {"x-api-key": placeholder})
        )
    finally:
        proxy.close()
    assert status(inside) == 200 and status(absolute_same) == 200
    assert status(outside) == 403
    assert [str(r.url) for r in upstream.seen] == [f"{ORIGIN}/api/anthropic/v1/messages"] * 2


def test_an_answer_streams_back_as_it_arrives():
    """The second event is only produced after the client has read the first: a proxy that
    buffered the whole answer would deadlock here (bounded by the socket timeout)."""
    first_read = threading.Event()

    class Events(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield b"event: message_start\ndata: {}\n\n"
            assert first_read.wait(10), "the client never saw the first event"
            yield b"event: message_stop\ndata: {}\n\n"

    reply = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Events())
    proxy, placeholder = start(Upstream_(reply))
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(10)
            conn.connect(str(proxy.socket_path))
            conn.sendall(post("/v1/messages", {"x-api-key": placeholder}))
            got = b""
            while b"message_start" not in got:
                got += conn.recv(65536)
            assert b"message_stop" not in got
            assert b"transfer-encoding: chunked" in got.lower()
            first_read.set()
            while data := conn.recv(65536):
                got += data
    finally:
        proxy.close()
    assert b"message_stop" in got and got.endswith(b"0\r\n\r\n")


def test_the_head_bound(running):
    proxy, placeholder = running
    huge = {"x-filler": "a" * (http_request.MAX_HEAD_BYTES + 10), "x-api-key": placeholder}
    assert status(ask(proxy, post("/v1/messages", huge))) == 431


def test_the_header_count_bound(running):
    proxy, placeholder = running
    many = {f"x-h{i}": "1" for i in range(http_request.MAX_HEADER_COUNT)}
    assert status(ask(proxy, post("/v1/messages", {**many, "x-api-key": placeholder}))) == 431


def test_the_request_body_bound(running, monkeypatch, upstream):
    proxy, placeholder = running
    monkeypatch.setattr(http_request, "MAX_REQUEST_BODY_BYTES", 1000)
    fits = ask(proxy, post("/v1/m", {"x-api-key": placeholder}, b"x" * 1000))
    too_big = ask(proxy, post("/v1/m", {"x-api-key": placeholder}, b"x" * 1001))
    chunked = (
        f"POST /v1/m HTTP/1.1\r\nx-api-key: {placeholder}\r\ntransfer-encoding: chunked\r\n\r\n"
        + "3e8\r\n" + "x" * 1000 + "\r\n" + "1\r\nx\r\n0\r\n\r\n"
    ).encode()  # fmt: skip
    assert status(fits) == 200 and status(too_big) == 413
    assert status(ask(proxy, chunked)) == 413
    assert len(upstream.seen) == 1


def test_a_chunked_request_body_is_forwarded_whole(running, upstream):
    proxy, placeholder = running
    raw = (
        f"POST /v1/m HTTP/1.1\r\nx-api-key: {placeholder}\r\ntransfer-encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    ).encode()
    assert status(ask(proxy, raw)) == 200
    assert upstream.seen[0].content == b"hello world"


def test_the_response_bound_cuts_the_stream(monkeypatch):
    monkeypatch.setattr(proxy_module, "MAX_RESPONSE_BYTES", 100)
    reply = httpx.Response(200, content=b"y" * 500)
    proxy, placeholder = start(Upstream_(reply))
    try:
        answer = ask(proxy, post("/v1/m", {"x-api-key": placeholder}))
    finally:
        proxy.close()
    assert status(answer) == 200 and not answer.endswith(b"0\r\n\r\n")
    assert b"y" * 100 not in answer


def test_a_slow_request_is_dropped_at_the_read_timeout(running, monkeypatch):
    proxy, placeholder = running
    monkeypatch.setattr(proxy_module, "CLIENT_READ_TIMEOUT_S", 0.3)
    partial = f"POST /v1/m HTTP/1.1\r\nx-api-key: {placeholder}\r\n".encode()  # never ends
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(str(proxy.socket_path))
        conn.sendall(partial)
        answer = conn.recv(65536)
    assert status(answer) == 408


def test_the_concurrency_bound(monkeypatch):
    monkeypatch.setattr(proxy_module, "MAX_CONCURRENT_REQUESTS", 1)
    held, release = threading.Event(), threading.Event()

    def slow(request: httpx.Request) -> httpx.Response:
        held.set()
        release.wait(10)
        return httpx.Response(200, json={})

    egress = Egress(base_url=ORIGIN, keys={"KEY": REAL}, carriers={"KEY": (X_API_KEY,)})
    subs = egress.substitutions()
    with CredentialProxy(Upstream.of(ORIGIN), subs, transport=httpx.MockTransport(slow)) as p:
        raw = post("/v1/m", {"x-api-key": subs[0].placeholder})
        first: list[bytes] = []
        thread = threading.Thread(target=lambda: first.append(ask(p, raw)))
        thread.start()
        assert held.wait(10)
        second = ask(p, raw)
        release.set()
        thread.join(10)
    assert status(second) == 503 and status(first[0]) == 200


@pytest.mark.parametrize(
    ("error", "code"),
    [(httpx.ReadTimeout("slow"), 504), (httpx.ConnectError("refused"), 502)],
)
def test_upstream_failures_are_gateway_errors(error, code):
    def fail(request: httpx.Request) -> httpx.Response:
        raise error

    egress = Egress(base_url=ORIGIN, keys={"KEY": REAL}, carriers={"KEY": (X_API_KEY,)})
    subs = egress.substitutions()
    with CredentialProxy(Upstream.of(ORIGIN), subs, transport=httpx.MockTransport(fail)) as p:
        assert status(ask(p, post("/v1/m", {"x-api-key": subs[0].placeholder}))) == code


def test_redirects_are_passed_back_not_followed(upstream):
    upstream.reply = httpx.Response(307, headers={"location": "https://evil.test/steal"})
    proxy, placeholder = start(upstream)
    try:
        answer = ask(proxy, post("/v1/m", {"x-api-key": placeholder}))
    finally:
        proxy.close()
    assert status(answer) == 307 and len(upstream.seen) == 1


def test_the_socket_folder_is_private_and_gone_after_the_turn(upstream):
    proxy, _ = start(upstream)
    folder = proxy.folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(proxy.socket_path.stat().st_mode)
    proxy.close()
    assert not folder.exists()


def test_placeholders_are_per_turn_and_random():
    egress = Egress(base_url=ORIGIN, keys={"A": REAL, "B": REAL}, carriers={"A": (), "B": ()})
    one, two = egress.substitutions(), egress.substitutions()
    assert one[0].placeholder == one[1].placeholder  # one key, one placeholder
    assert one[0].placeholder != two[0].placeholder
    assert REAL not in repr(egress) and REAL not in repr(one)


def test_a_chunk_size_line_is_bounded(running):
    proxy, placeholder = running
    raw = (
        f"POST /v1/m HTTP/1.1\r\nx-api-key: {placeholder}\r\ntransfer-encoding: chunked\r\n\r\n"
        + "1" * (http_request.MAX_CHUNK_LINE_BYTES + 10)
    ).encode()
    assert status(ask(proxy, raw)) == 400


def _refused_then_wait(proxy: CredentialProxy, placeholder: str, body: bytes) -> tuple[int, float]:
    """Send a head declaring a body past the bound and ``body``, then nothing: the status and how
    long until the proxy closed the connection."""
    head = f"POST /v1/m HTTP/1.1\r\nx-api-key: {placeholder}\r\ncontent-length: 5000\r\n\r\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(20)
        conn.connect(str(proxy.socket_path))
        conn.sendall(head.encode())
        answer = conn.recv(65536)
        started = time.monotonic()
        try:
            conn.sendall(body)
            while conn.recv(65536):
                pass
        except OSError:
            pass
        return status(answer), time.monotonic() - started


def test_after_a_refusal_the_rest_of_the_request_is_drained_up_to_a_bound(running, monkeypatch):
    proxy, placeholder = running
    monkeypatch.setattr(http_request, "MAX_REQUEST_BODY_BYTES", 100)
    monkeypatch.setattr(proxy_module, "MAX_DRAIN_BYTES", 10)
    monkeypatch.setattr(proxy_module, "DRAIN_TIMEOUT_S", 10.0)
    code, waited = _refused_then_wait(proxy, placeholder, b"x" * 50)
    assert code == 413 and waited < 5  # closed once 10 bytes were drained, not at 10 s


def test_after_a_refusal_a_silent_client_is_dropped_at_the_drain_timeout(running, monkeypatch):
    proxy, placeholder = running
    monkeypatch.setattr(http_request, "MAX_REQUEST_BODY_BYTES", 100)
    monkeypatch.setattr(proxy_module, "DRAIN_TIMEOUT_S", 0.3)
    code, waited = _refused_then_wait(proxy, placeholder, b"")
    assert code == 413 and waited < 5


@pytest.mark.parametrize(
    ("sent", "kept"), [(5, 3), (3, 3)], ids=["past-the-bound-counted", "at-the-bound-all-kept"]
)
def test_a_turns_refusals_are_all_counted_and_the_first_max_kept(
    running, upstream, monkeypatch, sent, kept
):
    """The agent decides how many refused requests it makes: the record keeps the first
    ``MAX_REFUSALS_KEPT`` and counts every one; its twin, at the bound, keeps them all."""
    monkeypatch.setattr(proxy_module, "MAX_REFUSALS_KEPT", 3)
    proxy, _ = running
    for number in range(sent):
        assert status(ask(proxy, post(f"/v1/{number}", {}))) == 403
    assert proxy.record.refusals == sent
    refused = proxy.record.refused or []
    assert [f"/v1/{n}" in line for n, (_, line) in enumerate(refused)] == [True] * kept


STALLS = {
    "connect": ("UPSTREAM_CONNECT_TIMEOUT_S", unconnectable),
    "read": ("UPSTREAM_READ_TIMEOUT_S", silent),
}


@pytest.mark.parametrize("stall", list(STALLS))
def test_a_stalled_upstream_is_a_504_at_its_bound(monkeypatch, stall):
    """Over real loopback sockets: an upstream whose connect never completes, and one that
    accepts and never answers. With ``UPSTREAM_CONNECT_TIMEOUT_S`` / ``UPSTREAM_READ_TIMEOUT_S``
    patched to half a second, the CLI gets a 504 within the bound, not the 20 s / 10 min."""
    name, server = STALLS[stall]
    monkeypatch.setattr(proxy_module, name, 0.5)
    with server() as port:
        base = f"http://127.0.0.1:{port}"
        egress = Egress(base_url=base, keys={"KEY": REAL}, carriers={"KEY": (X_API_KEY,)})
        subs = egress.substitutions()
        with CredentialProxy(Upstream.of(base), subs) as p:
            started = time.monotonic()
            answer = ask(p, post("/v1/m", {"x-api-key": subs[0].placeholder}))
            took = time.monotonic() - started
    assert status(answer) == 504 and b"upstream did not answer in time" in answer
    assert 0.5 <= took < 0.5 + 2.0


class _Answering(FakeHttpServer):
    def handle(self, request: FakeRequest) -> FakeResponse:
        return FakeResponse(200, b'{"ok": true}')


def test_an_upstream_that_answers_is_relayed_within_the_same_bounds(monkeypatch):
    """The twin: the same half-second bounds, a real loopback upstream that answers at once."""
    monkeypatch.setattr(proxy_module, "UPSTREAM_CONNECT_TIMEOUT_S", 0.5)
    monkeypatch.setattr(proxy_module, "UPSTREAM_READ_TIMEOUT_S", 0.5)
    with _Answering() as server:
        egress = Egress(
            base_url=server.base_url, keys={"KEY": REAL}, carriers={"KEY": (X_API_KEY,)}
        )
        subs = egress.substitutions()
        with CredentialProxy(Upstream.of(server.base_url), subs) as p:
            answer = ask(p, post("/v1/m", {"x-api-key": subs[0].placeholder}))
    assert status(answer) == 200 and b'{"ok": true}' in answer
