"""The registry proxy's rules, on its real socket, with the registry behind an httpx
``MockTransport``: what it forwards, what it adds and strips, what it rewrites, what it refuses."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.support.stalled_servers import silent, unconnectable
from veranda_dagster.environment import registry_proxy
from veranda_dagster.environment.registries import Registry
from veranda_dagster.environment.registry_proxy import RegistryProxy
from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse

LOCAL = "http://127.0.0.1:41234"
CORP = Registry("corp", "https://pkgs.corp.example/simple", "pypi", "Bearer corp-secret-1")
FILES = Registry("files", "https://files.example.org")
seen: list[httpx.Request] = []


def _registry(request: httpx.Request) -> httpx.Response:
    seen.append(request)
    if request.url.path == "/simple/tool/":
        page = '<a href="https://files.example.org/t/tool-1.whl">tool</a>'
        return httpx.Response(200, text=page, headers={"content-type": "text/html"})
    if request.url.path == "/moved":
        return httpx.Response(302, headers={"location": "https://files.example.org/t/x.whl"})
    return httpx.Response(200, content=b"wheel-bytes", headers={"content-type": "application/zip"})


@pytest.fixture
def proxy() -> Iterator[RegistryProxy]:
    seen.clear()
    with RegistryProxy([CORP, FILES], LOCAL, transport=httpx.MockTransport(_registry)) as p:
        yield p


def _send(proxy: RegistryProxy, raw: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(10)
        conn.connect(str(proxy.socket_path))
        conn.sendall(raw.encode())
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return data


def test_the_credential_is_added_outside_and_links_come_back_through_the_proxy(
    proxy: RegistryProxy,
) -> None:
    answer = _send(
        proxy,
        "GET /corp/simple/tool/ HTTP/1.1\r\nhost: x\r\n"
        "authorization: Bearer forged\r\ncookie: a=b\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 200")
    assert f'href="{LOCAL}/files/t/tool-1.whl"'.encode() in answer
    (upstream,) = seen
    assert str(upstream.url) == "https://pkgs.corp.example/simple/tool/"
    assert upstream.headers["authorization"] == "Bearer corp-secret-1"
    assert "cookie" not in upstream.headers
    assert b"corp-secret-1" not in answer


def test_a_file_host_gets_no_other_registry_credential(proxy: RegistryProxy) -> None:
    answer = _send(proxy, "GET /files/t/tool-1.whl HTTP/1.1\r\nhost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"0\r\n\r\n")
    assert b"wheel-bytes" in answer
    assert "authorization" not in seen[0].headers


def test_redirects_are_not_followed_and_point_back_at_the_proxy(proxy: RegistryProxy) -> None:
    answer = _send(proxy, "GET /corp/moved HTTP/1.1\r\nhost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 302")
    assert f"location: {LOCAL}/files/t/x.whl".encode() in answer.lower()
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("raw", "status", "why"),
    [
        ("POST /corp/simple/ HTTP/1.1\r\ncontent-length: 1\r\n\r\nx", 405, "read-only"),
        ("PUT /corp/simple/x HTTP/1.1\r\ncontent-length: 0\r\n\r\n", 405, "read-only"),
        ("CONNECT evil.example:443 HTTP/1.1\r\n\r\n", 405, "read-only"),
        ("GET http://evil.example/x HTTP/1.1\r\n\r\n", 403, "evil.example is not a configured"),
        ("GET https://pkgs.corp.example.evil/x HTTP/1.1\r\n\r\n", 403, "not a configured"),
        ("GET /other/simple/ HTTP/1.1\r\n\r\n", 403, "/other is not a configured"),
        ("GET /corp/simple/../../admin HTTP/1.1\r\n\r\n", 400, "dot segments"),
        ("GET /corp/x HTTP/1.1\r\nupgrade: websocket\r\n\r\n", 501, "upgrades"),
    ],
)
def test_refusals(proxy: RegistryProxy, raw: str, status: int, why: str) -> None:
    answer = _send(proxy, raw)
    assert answer.startswith(f"HTTP/1.1 {status}".encode()), answer[:80]
    assert why in answer.decode()
    assert seen == []
    assert len(proxy.refused) == 1 and "corp-secret" not in proxy.refused[0]


def test_an_absolute_target_on_a_configured_origin_is_forwarded(proxy: RegistryProxy) -> None:
    answer = _send(proxy, "HEAD https://files.example.org/t/x.whl HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200") and b"wheel-bytes" not in answer
    assert [r.method for r in seen] == ["HEAD"]


@pytest.mark.parametrize(
    ("sent", "kept"), [(5, 3), (3, 3)], ids=["past-the-bound-counted", "at-the-bound-all-kept"]
)
def test_a_setups_refusals_are_all_counted_and_the_first_max_kept(
    proxy: RegistryProxy, monkeypatch: pytest.MonkeyPatch, sent: int, kept: int
) -> None:
    """The repository's script decides how many refused requests it makes: the first
    ``MAX_REFUSALS_KEPT`` are kept (in request order), every one is counted; at the bound all
    are kept."""
    monkeypatch.setattr(registry_proxy, "MAX_REFUSALS_KEPT", 3)
    for number in range(sent):
        answer = _send(proxy, f"GET /other/{number} HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 403")
    assert proxy.refusals == sent
    assert [f"/other/{n}" in line for n, line in enumerate(proxy.refused)] == [True] * kept


def _unchunked(answer: bytes) -> tuple[bytes, bytes]:
    """(head, body) of a chunked answer, the chunks joined."""
    head, _, rest = answer.partition(b"\r\n\r\n")
    body = b""
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        body, rest = body + rest[:size], rest[size + 2 :]
    return head, body


@pytest.mark.parametrize(
    ("page_bytes", "rewritten"), [(300, False), (60, True)], ids=["past-the-bound", "within"]
)
def test_an_index_page_past_the_rewrite_bound_streams_through_whole_and_unchanged(
    monkeypatch: pytest.MonkeyPatch, page_bytes: int, rewritten: bool
) -> None:
    """An index page sent without a length (chunked) and longer than ``MAX_REWRITE_BYTES``
    (here 100) is sent on unchanged and whole, the part read while looking for the end first;
    its twin, within the bound, comes back rewritten, with its length."""
    monkeypatch.setattr(registry_proxy, "MAX_REWRITE_BYTES", 100)
    link = b'<a href="https://files.example.org/t/tool-1.whl">tool</a>\n'
    page = (link * (page_bytes // len(link) + 1))[:page_bytes]

    def chunked_page(request: httpx.Request) -> httpx.Response:
        pieces = (page[i : i + 32] for i in range(0, len(page), 32))
        return httpx.Response(200, headers={"content-type": "text/html"}, content=pieces)

    with RegistryProxy([CORP, FILES], LOCAL, transport=httpx.MockTransport(chunked_page)) as p:
        answer = _send(p, "GET /corp/simple/tool/ HTTP/1.1\r\nhost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200"), answer[:120]
    if rewritten:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert b"content-length" in head.lower()
        assert body == page.replace(b"https://files.example.org", f"{LOCAL}/files".encode())
    else:
        head, body = _unchunked(answer)
        assert b"transfer-encoding: chunked" in head.lower()
        assert body == page


@pytest.mark.parametrize(("size", "whole"), [(101, False), (100, True)], ids=["past", "at"])
def test_a_package_past_max_package_bytes_is_cut_without_a_last_chunk(
    monkeypatch: pytest.MonkeyPatch, size: int, whole: bool
) -> None:
    """A download one byte past ``MAX_PACKAGE_BYTES`` (here 100) is cut before the chunk that
    crosses it and never given its last chunk, so pip sees a broken answer, not a short file;
    its twin, exactly at the bound, arrives whole and terminated."""
    monkeypatch.setattr(registry_proxy, "MAX_PACKAGE_BYTES", 100)
    wheel = bytes(range(size))

    def download(request: httpx.Request) -> httpx.Response:
        pieces = (wheel[i : i + 25] for i in range(0, len(wheel), 25))
        return httpx.Response(200, headers={"content-type": "application/zip"}, content=pieces)

    with RegistryProxy([CORP, FILES], LOCAL, transport=httpx.MockTransport(download)) as p:
        answer = _send(p, "GET /files/t/tool-1.whl HTTP/1.1\r\nhost: x\r\n\r\n")
    _, body = _unchunked(answer)
    assert answer.endswith(b"0\r\n\r\n") is whole
    assert body == (wheel if whole else wheel[:100])


STALLS = {
    "connect": ("UPSTREAM_CONNECT_TIMEOUT_S", unconnectable),
    "read": ("UPSTREAM_READ_TIMEOUT_S", silent),
}


@pytest.mark.parametrize("stall", list(STALLS))
def test_a_stalled_registry_is_a_504_at_its_bound(
    monkeypatch: pytest.MonkeyPatch, stall: str
) -> None:
    """Over real loopback sockets: a registry whose connect never completes, and one that
    accepts and never answers. With ``UPSTREAM_CONNECT_TIMEOUT_S`` / ``UPSTREAM_READ_TIMEOUT_S``
    patched to half a second, pip gets a 504 within the bound, not after 20 s / 2 min."""
    name, server = STALLS[stall]
    monkeypatch.setattr(registry_proxy, name, 0.5)
    with server() as port:
        slow = Registry("slow", f"http://127.0.0.1:{port}/simple", "pypi")
        with RegistryProxy([slow], LOCAL) as p:
            started = time.monotonic()
            answer = _send(p, "GET /slow/tool/ HTTP/1.1\r\nhost: x\r\n\r\n")
            took = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 504") and b"registry did not answer in time" in answer
    assert 0.5 <= took < 0.5 + 2.0


class _Index(FakeHttpServer):
    def handle(self, request: FakeRequest) -> FakeResponse:
        return FakeResponse(200, b"wheel-bytes", content_type="application/zip")


def test_a_registry_that_answers_is_relayed_within_the_same_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The twin: the same half-second bounds, a real loopback registry that answers at once."""
    monkeypatch.setattr(registry_proxy, "UPSTREAM_CONNECT_TIMEOUT_S", 0.5)
    monkeypatch.setattr(registry_proxy, "UPSTREAM_READ_TIMEOUT_S", 0.5)
    with _Index() as index:
        fast = Registry("fast", index.base_url + "/simple", "pypi")
        with RegistryProxy([fast], LOCAL) as p:
            answer = _send(p, "GET /fast/tool-1.whl HTTP/1.1\r\nhost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200") and b"wheel-bytes" in answer
