"""The receiver's named bounds, each hit: the socket read, the remembered deliveries, the
unknown route."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.sources.push.test_linear_push import linear_body, post
from veranda_dagster.sources import webhook_server
from veranda_dagster.sources.push_launch import Launch
from veranda_dagster.sources.webhook_auth import sign_linear
from veranda_dagster.sources.webhook_events import Scope
from veranda_dagster.sources.webhook_server import WebhookReceiver, make_server

SECRET = "s3cret-for-bounds"


def _launched(calls: list[str]) -> webhook_server.Launcher:
    def launch(source: str, key: str, mentions: tuple[str, ...]) -> Launch:
        calls.append(key)
        return Launch(key, f"run-{len(calls)}")

    return launch


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[str]]]:
    monkeypatch.setattr(webhook_server, "WEBHOOK_READ_TIMEOUT_S", 0.5)
    calls: list[str] = []
    receiver = WebhookReceiver({"linear": SECRET}, _launched(calls), Scope("bot-1"))
    server = make_server(receiver, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"{host!s}:{port}", calls
    finally:
        server.shutdown()
        server.server_close()


def test_a_client_that_never_sends_its_body_is_cut_at_the_read_bound(
    served: tuple[str, list[str]],
) -> None:
    address, calls = served
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /webhooks/linear HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        started = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the server, no answer, nothing launched
        assert time.monotonic() - started < 5.0
    assert calls == []


def test_remembered_deliveries_are_bounded(
    served: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhook_server, "MAX_REMEMBERED_DELIVERIES", 2)
    address, calls = served
    bodies = [linear_body(f"ENG-80{i}", webhook_id=f"d{i}") for i in range(3)]
    for body in bodies:
        post(f"http://{address}/webhooks/linear", body, sign_linear(SECRET, body))
    # d0 was forgotten when d2 came: it meets the launcher (the instance's gate) again
    status, answer = post(
        f"http://{address}/webhooks/linear", bodies[0], sign_linear(SECRET, bodies[0])
    )
    assert status == 201, answer
    status, answer = post(
        f"http://{address}/webhooks/linear", bodies[2], sign_linear(SECRET, bodies[2])
    )
    assert answer["outcome"] == "duplicate delivery"
    assert calls == ["ENG-800", "ENG-801", "ENG-802", "ENG-800"]


def test_an_unknown_source_or_path_is_404(served: tuple[str, list[str]]) -> None:
    address, _ = served
    assert post(f"http://{address}/webhooks/github", b"{}", {})[0] == 404
    status, answer = post(f"http://{address}/elsewhere", b"{}", {})
    assert status == 404
    assert json.dumps(answer).find(SECRET) == -1


def test_a_launch_that_fails_answers_500_with_its_type_only() -> None:
    def broken(source: str, key: str, mentions: tuple[str, ...]) -> Launch:
        raise RuntimeError("postgres://user:pw@db/x is down")

    server = make_server(WebhookReceiver({"linear": SECRET}, broken, Scope("bot-1")), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        body = linear_body("ENG-890")
        url = f"http://{host!s}:{port}/webhooks/linear"
        assert post(url, body, sign_linear(SECRET, body)) == (500, {"error": "RuntimeError"})
    finally:
        server.shutdown()
        server.server_close()


def test_connections_past_the_concurrency_bound_are_closed_unanswered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(webhook_server, "MAX_CONCURRENT_REQUESTS", 1)
    monkeypatch.setattr(webhook_server, "WEBHOOK_READ_TIMEOUT_S", 3.0)
    server = make_server(WebhookReceiver({"linear": SECRET}, _launched([]), Scope()), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        with socket.create_connection((str(host), port), timeout=10) as slow:
            slow.sendall(b"POST /webhooks/linear HTTP/1.1\r\n")  # holds the one slot
            time.sleep(0.3)
            with socket.create_connection((str(host), port), timeout=10) as second:
                second.sendall(b"POST /webhooks/linear HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                assert second.recv(1024) == b""  # closed at once, no thread spent on it
        time.sleep(3.5)  # the slow one timed out and gave its slot back
        body = linear_body("ENG-880", webhook_id="after")
        url = f"http://{host!s}:{port}/webhooks/linear"
        assert post(url, body, sign_linear(SECRET, body))[0] == 202  # Scope(): not the bot's
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"[" * 100_000, "nests deeper"),  # past the decoder's recursion: was a RecursionError
        (b"[" * 40 + b"]" * 40, "webhookTimestamp"),  # twin: read, then refused for its stamp
        (b"{not json", "not JSON"),
    ],
    ids=["deep", "shallow", "not-json"],
)
def test_a_signed_body_nested_past_the_decoder_is_malformed_not_a_crash(
    body: bytes, reason: str
) -> None:
    from veranda_dagster.sources.webhook_auth import (
        WebhookMalformed,
        WebhookUnauthorized,
        verify_linear,
    )

    with pytest.raises((WebhookMalformed, WebhookUnauthorized), match=reason):
        verify_linear(
            "s", body, {"linear-signature": sign_linear("s", body)["Linear-Signature"]}, 0.0
        )
