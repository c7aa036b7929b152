"""The one retry loop in ``HttpService`` is bounded by ``MAX_HTTP_ATTEMPTS``, for the base rule
(429/5xx) and for a service that overrides the rule (GitHub's 403 rate limit)."""

from __future__ import annotations

import httpx
import pytest

from veranda_dagster.domain.core.errors import TransientError
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.http.client import MAX_HTTP_ATTEMPTS, HttpService


def _always(status: int, headers: dict[str, str], seen: list[httpx.Request]):
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, headers=headers, text="busy secret-token-value")

    return httpx.MockTransport(handler)


def test_base_rule_retries_exactly_to_the_bound_then_raises_scrubbed():
    seen: list[httpx.Request] = []
    service = HttpService(
        "https://api.test",
        "secret-token-value",
        transport=_always(503, {}, seen),
        sleep=lambda s: None,
    )
    with pytest.raises(TransientError, match="server error") as err:
        service.request("GET", "/x")
    assert len(seen) == MAX_HTTP_ATTEMPTS
    assert len(service.waits) == MAX_HTTP_ATTEMPTS - 1
    assert "secret-token-value" not in str(err.value)


def test_githubs_own_rule_uses_the_same_bound():
    seen: list[httpx.Request] = []
    client = GitHubClient(
        "https://api.github.test",
        "t",
        transport=_always(403, {"retry-after": "1"}, seen),
        sleep=lambda s: None,
    )
    with pytest.raises(TransientError, match=r"rate limited.*retry in 1s"):
        client.request("GET", "/repos/a/b")
    assert len(seen) == MAX_HTTP_ATTEMPTS and client.waits == [1.0] * (MAX_HTTP_ATTEMPTS - 1)
