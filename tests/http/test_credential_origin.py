"""Credentials go only to the configured origin: pagination links and redirects that name
another scheme, host or port are a typed error, and nothing is sent there; a client with a
token needs an https base URL (plain http for a loopback host only)."""

from __future__ import annotations

import httpx
import pytest

from veranda_dagster.domain.core.bounds import MAX_HTTP_REDIRECTS
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.http.client import CredentialOriginError, HttpService
from veranda_dagster.sources.linear.client import LinearClient
from veranda_dagster.sources.slack.client import SlackClient

TOKEN = "ghs_0123456789abcdefghijklmnop"
BASE = "https://api.github.test"


def _github(routes, seen: list[httpx.Request], base: str = BASE) -> GitHubClient:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return routes(request)

    return GitHubClient(base, TOKEN, transport=httpx.MockTransport(handler), sleep=lambda s: None)


def _page(items: list[dict], next_url: str | None = None) -> httpx.Response:
    headers = {"link": f'<{next_url}>; rel="next"'} if next_url else {}
    return httpx.Response(200, json=items, headers=headers)


def test_a_same_origin_next_link_is_followed_with_the_token():
    seen: list[httpx.Request] = []

    def routes(request):
        if request.url.params.get("page") == "2":
            return _page([{"id": 2}])
        return _page([{"id": 1}], f"{BASE}:443/repos/o/r/pulls?page=2")  # explicit default port

    assert [c["id"] for c in _github(routes, seen)._pages("/repos/o/r/pulls")] == [1, 2]
    assert [r.headers["authorization"] for r in seen] == [f"Bearer {TOKEN}"] * 2


@pytest.mark.parametrize(
    "next_url",
    [
        "https://evil.test/repos/o/r/pulls?page=2",  # another host
        "http://api.github.test/repos/o/r/pulls?page=2",  # plain http, same host
        "https://api.github.test:8443/repos/o/r/pulls?page=2",  # another port
        "//evil.test/repos/o/r/pulls?page=2",  # scheme-relative
    ],
)
def test_a_next_link_off_the_origin_is_a_typed_error_and_nothing_is_sent_there(next_url):
    seen: list[httpx.Request] = []
    client = _github(lambda request: _page([{"id": 1}], next_url), seen)
    with pytest.raises(
        CredentialOriginError, match=r"refusing .*only to https://api.github.test:443"
    ):
        client._pages("/repos/o/r/pulls")
    assert [str(r.url.host) for r in seen] == ["api.github.test"]
    assert all(r.url.scheme == "https" and r.url.port in (None, 443) for r in seen)


def test_same_origin_redirects_are_followed_with_the_token_and_bounded():
    seen: list[httpx.Request] = []

    def routes(request):
        if request.url.path == "/repos/old/name":
            return httpx.Response(301, headers={"location": "/repositories/42"})
        if request.url.path == "/repositories/42":
            return httpx.Response(200, json={"full_name": "new/name"})
        return httpx.Response(302, headers={"location": request.url.path + "x"})

    client = _github(routes, seen)
    assert client.json("GET", "/repos/old/name") == {"full_name": "new/name"}
    assert seen[-1].headers["authorization"] == f"Bearer {TOKEN}"
    seen.clear()
    with pytest.raises(InputError, match=f"more than {MAX_HTTP_REDIRECTS} redirects"):
        client.request("GET", "/loop")
    assert len(seen) == MAX_HTTP_REDIRECTS + 1


def test_a_redirect_off_the_origin_is_refused_for_every_client():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "evil.test":
            return httpx.Response(200, json={"ok": True})
        return httpx.Response(307, headers={"location": "https://evil.test/steal"})

    transport = httpx.MockTransport(handler)
    clients = [
        GitHubClient(BASE, TOKEN, transport=transport, sleep=lambda s: 0),
        SlackClient("https://slack.test/api", "xoxb-1-2-abc", transport=transport),
        LinearClient("https://linear.test/graphql", "lin_api_x", transport=transport),
    ]
    for client in clients:
        with pytest.raises(CredentialOriginError, match=r"evil\.test:443"):
            client.request("POST", client.base_url, json={"q": 1})
    assert seen and all(r.url.host != "evil.test" for r in seen)


def test_the_caller_can_still_take_a_redirect_as_it_is():
    """The Actions log download: the 302 is returned and its target fetched without the token."""
    client = _github(lambda r: httpx.Response(302, headers={"location": "https://blob.test/l"}), [])
    response = client.request("GET", "/repos/o/r/actions/jobs/1/logs", follow_redirects=False)
    assert response.status_code == 302


@pytest.mark.parametrize(
    ("base", "token", "ok"),
    [
        ("https://api.github.com", TOKEN, True),
        ("http://api.github.com", TOKEN, False),
        ("http://10.0.0.5:8080", TOKEN, False),
        ("http://127.0.0.1:18080", TOKEN, True),  # the simulation's fakes
        ("http://127.8.9.1:18080", TOKEN, True),
        ("http://localhost:18080", TOKEN, True),
        ("http://[::1]:18080", TOKEN, True),
        ("http://prometheus.monitoring:9090", None, True),  # no credentials to protect
        ("ftp://api.github.com", None, False),
    ],
)
def test_credentials_need_https_except_on_loopback(base, token, ok):
    if ok:
        assert HttpService(base, token).origin[0] in ("http", "https")
    else:
        with pytest.raises(ConfigError, match=r"https|not an http"):
            HttpService(base, token)
