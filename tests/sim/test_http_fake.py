"""The fake server base: loopback binding, request log, fault injection."""

from __future__ import annotations

import httpx

from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse, paginate


class Echo(FakeHttpServer):
    name = "echo"

    def handle(self, request: FakeRequest) -> FakeResponse:
        if request.path == "/boom":
            raise RuntimeError("bug in fake")
        return FakeResponse(200, {"path": request.path, "params": request.params()})


def test_binds_loopback_and_logs_without_credentials() -> None:
    with Echo() as fake:
        assert fake.base_url.startswith("http://127.0.0.1:")
        r = httpx.post(
            f"{fake.base_url}/x?a=1",
            data={"b": "2"},
            headers={"Authorization": "Bearer sekrit-value"},
        )
        assert r.json() == {"path": "/x", "params": {"a": "1", "b": "2"}}
        (entry,) = fake.requests
        assert entry.authorized and entry.status == 200
        assert "sekrit-value" not in repr(entry)


def test_fault_injection_counts_down_and_matches_patterns() -> None:
    with Echo() as fake:
        fake.fail_next("/repos/*/pulls", 429, times=2, retry_after=7)
        fake.fail_next("/other", 503, method="POST")
        statuses = [httpx.get(f"{fake.base_url}/repos/a/pulls") for _ in range(3)]
        assert [s.status_code for s in statuses] == [429, 429, 200]
        assert statuses[0].headers["retry-after"] == "7"
        assert httpx.get(f"{fake.base_url}/other").status_code == 200  # method must match
        assert httpx.post(f"{fake.base_url}/other").status_code == 503
        assert httpx.post(f"{fake.base_url}/other").status_code == 200
        assert [r.fault for r in fake.requests_to("/repos/*/pulls")] == [
            "injected 429",
            "injected 429",
            None,
        ]


def test_a_bug_in_the_fake_is_a_500_not_a_hang() -> None:
    with Echo() as fake:
        r = httpx.get(f"{fake.base_url}/boom", timeout=5)
        assert r.status_code == 500 and "bug in fake" in r.json()["message"]


def test_paginate_edges() -> None:
    items = list(range(5))
    assert paginate(items, 1, 2) == ([0, 1], True)
    assert paginate(items, 3, 2) == ([4], False)
    assert paginate(items, 4, 2) == ([], False)
