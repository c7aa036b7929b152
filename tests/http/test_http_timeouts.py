"""``DEFAULT_TIMEOUT`` (per connect, per read) of every tracker and forge client, hit over real
loopback sockets: a host whose connect never completes and one that accepts and never answers.
Patched to a fifth of a second, each attempt ends at it and, after ``MAX_HTTP_ATTEMPTS``
attempts, the call is a ``TransientError`` naming the timeout. The twin: a server that
answers at once is read under the same bounds."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.support.stalled_servers import silent, unconnectable
from veranda_dagster.domain.core.errors import TransientError
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.http import client as http_client
from veranda_dagster.http.client import MAX_HTTP_ATTEMPTS
from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse

BOUND_S = 0.2
TOKEN = "tok_http_timeouts_0001"
STALLS = {"connect": (unconnectable, "ConnectTimeout"), "read": (silent, "ReadTimeout")}


@pytest.mark.parametrize("stall", list(STALLS))
def test_a_stalled_host_is_transient_after_each_attempt_hits_the_timeout(
    monkeypatch: pytest.MonkeyPatch, stall: str
) -> None:
    monkeypatch.setattr(http_client, "DEFAULT_TIMEOUT", httpx.Timeout(BOUND_S))
    server, error = STALLS[stall]
    with server() as port:
        github = GitHubClient(f"http://127.0.0.1:{port}", TOKEN, sleep=lambda s: None)
        started = time.monotonic()
        with pytest.raises(TransientError, match=f"github unreachable: {error}"):
            github.list_comments("acme/app", 7)
        took = time.monotonic() - started
        github.close()
    assert MAX_HTTP_ATTEMPTS * BOUND_S <= took < MAX_HTTP_ATTEMPTS * BOUND_S + 2.0
    assert len(github.waits) == MAX_HTTP_ATTEMPTS - 1  # every attempt made, none more


class _Answering(FakeHttpServer):
    def handle(self, request: FakeRequest) -> FakeResponse:
        if request.path == "/user":
            return FakeResponse(200, b'{"id": 1, "login": "bot"}', content_type="application/json")
        return FakeResponse(200, b"[]", content_type="application/json")


def test_a_host_that_answers_is_read_under_the_same_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http_client, "DEFAULT_TIMEOUT", httpx.Timeout(BOUND_S))
    with _Answering() as server:
        github = GitHubClient(server.base_url, TOKEN, sleep=lambda s: None)
        comments = github.list_comments("acme/app", 7)
        github.close()
    assert list(comments) == [] and github.waits == []
