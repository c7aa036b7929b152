"""GitHub code search through httpx.MockTransport with recorded response shapes."""

import json
import time
from pathlib import Path

import httpx
import pytest

from tests.support.clock import SleepingClock
from veranda_dagster.domain.context.code_search import CodeSearch
from veranda_dagster.domain.context.retrieval import build_pack
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.forges.github import code_search as github_code_search
from veranda_dagster.forges.github.code_search import TEXT_MATCH, GitHubCodeSearch
from veranda_dagster.forges.github.limits import (
    GITHUB_CODE_SEARCH_PER_MINUTE,
    GITHUB_SEARCH_PER_PAGE,
    GITHUB_TEXT_MATCHES_READ,
)
from veranda_dagster.storage.search_budget import MemoryBudgetState, SearchBudget

FIXTURES = Path(__file__).parents[2] / "fixtures" / "context"
SHA = "825ac37f0e2b9a1c3d4e5f60718293a4b5c6d7e8"


def _fixture(name: str):
    return json.loads((FIXTURES / name).read_text())


START = 1000.0
"""Where each test's clock starts (epoch seconds)."""


class Forge:
    """The GitHub endpoints code search touches, recording every request."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path
        if path == "/search/code":
            return httpx.Response(200, json=_fixture("github_search_code_text_match.json"))
        if path == "/repos/acme/api":
            return httpx.Response(200, json=_fixture("github_repo.json"))
        if path == "/repos/acme/api/commits/main":
            return httpx.Response(200, text=SHA)
        if path == "/repos/acme/api/contents/src/http/retry.py":
            return httpx.Response(200, json=_fixture("github_contents_retry_py.json"))
        if path == "/repos/acme/api/contents/src/http/client.py":
            return httpx.Response(200, json=_fixture("github_contents_client_py.json"))
        if path == "/repos/acme/api/contents/docs/backoff.md":
            return httpx.Response(200, json=_fixture("github_contents_backoff_md.json"))
        return httpx.Response(404, json=_fixture("github_not_found.json"))

    def searches(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path == "/search/code"]


def _client(forge: Forge, clock: SleepingClock | None = None, **kw) -> GitHubCodeSearch:
    clock = clock or SleepingClock(START)
    return GitHubCodeSearch(
        "https://api.github.test",
        "ghs_secret",
        "acme/api",
        transport=httpx.MockTransport(forge),
        clock=clock,
        sleep=clock.sleep,
        **kw,
    )


def test_search_request_shape_and_hits_located_in_the_files():
    forge = Forge()
    search = _client(forge)
    assert isinstance(search, CodeSearch)
    hits = search.search("backoff")
    request = forge.searches()[0]
    assert request.url.params["q"] == "backoff repo:acme/api"
    assert request.headers["accept"] == TEXT_MATCH
    assert request.headers["authorization"] == "Bearer ghs_secret"
    assert request.headers["x-github-api-version"] == "2022-11-28"
    assert [(h.path, h.line, h.kind) for h in hits] == [
        ("src/http/retry.py", 20, "content"),
        ("src/http/client.py", 1, "content"),
        ("src/http/client.py", 5, "content"),
        ("docs/backoff.md", 1, "path"),
    ]
    contents = [r for r in forge.requests if "/contents/" in r.url.path]
    assert {r.url.params["ref"] for r in contents} == {SHA}


def test_windows_come_from_the_contents_api_at_the_default_branch_sha():
    search = _client(Forge())
    window = search.read_window("src/http/retry.py", 20)
    assert (window.start, window.end) == (15, 26)
    assert "def backoff(attempt):\n" in window.text
    assert search.sha == SHA
    with pytest.raises(InputError, match="not a file"):
        search.read_window("missing.py", 1)


def test_an_indexed_file_the_contents_api_cannot_read_yields_no_hit():
    texts = {"src/http/retry.py": "backoff\n"}
    hits = _client(Forge(), contents=texts.get, sha=SHA).search("backoff")
    assert [h.path for h in hits] == ["src/http/retry.py"]


def test_a_local_clone_can_supply_the_file_texts():
    forge = Forge()
    texts = {"src/http/retry.py": "x\nbackoff()\n", "src/http/client.py": "backoff\n"}
    search = _client(forge, contents=texts.get, sha=SHA)
    hits = search.search("backoff")
    assert [(h.path, h.line) for h in hits] == [
        ("src/http/retry.py", 2),
        ("src/http/client.py", 1),
    ]
    assert [r.url.path for r in forge.requests] == ["/search/code"]


def test_a_seed_with_spaces_is_quoted_and_an_overlong_query_refused():
    forge = Forge()
    search = _client(forge, sha=SHA)
    search.search("def backoff")
    assert forge.searches()[0].url.params["q"] == '"def backoff" repo:acme/api'
    with pytest.raises(InputError, match="256"):
        search.search("x" * 250)


def test_the_eleventh_search_in_a_minute_waits_for_the_window():
    forge, clock = Forge(), SleepingClock(START)
    search = _client(forge, clock, contents=lambda _p: "backoff\n", sha=SHA)
    for _ in range(GITHUB_CODE_SEARCH_PER_MINUTE):
        search.search("backoff")
    assert clock.sleeps == []
    search.search("backoff")
    assert clock.sleeps == [60.0]
    assert len(forge.searches()) == 11


def test_the_window_slides_rather_than_resets():
    clock = SleepingClock(START)
    limiter = SearchBudget(
        MemoryBudgetState(), "k", GITHUB_CODE_SEARCH_PER_MINUTE, clock=clock, sleep=clock.sleep
    )
    for _ in range(10):
        limiter.acquire()
        clock.now += 5.0  # ten requests over 50 s
    limiter.acquire()  # at t+50 the first (t+0) is still inside the minute: wait 10 s
    assert clock.sleeps == [pytest.approx(10.0)]
    limiter.acquire()  # the second one (t+5) leaves at t+65; now is t+60
    assert clock.sleeps == [pytest.approx(10.0), pytest.approx(5.0)]


def test_a_pack_over_github_search_is_bounded_and_cited_at_the_sha():
    search = _client(Forge())
    pack = build_pack(["backoff"], search)
    assert [f.path for f in pack.files] == [
        "src/http/retry.py",
        "src/http/client.py",
        "docs/backoff.md",
    ]
    assert {c.sha for c in pack.citations} == {SHA}
    assert pack.searches == 1


def test_a_malformed_search_body_is_a_clear_error():
    search = GitHubCodeSearch(
        "https://api.github.test",
        "t",
        "acme/api",
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"nope": 1})),
        sha=SHA,
    )
    with pytest.raises(InputError, match="'items'"):
        search.search("backoff")
    with pytest.raises(InputError, match="org/name"):
        GitHubCodeSearch("https://api.github.test", "t", "acme")


def test_the_rate_is_configurable_and_a_clone_can_be_attached(tmp_path):
    from tests.fixtures.context.gitrepo import git, make_repo

    repo = make_repo(tmp_path / "r", {"src/http/retry.py": "a\nbackoff()\n"})
    base = git(repo, "rev-parse", "HEAD")
    forge, clock = Forge(), SleepingClock(START)
    search = _client(forge, clock, per_minute=2)
    search.attach_clone(repo, base)
    for _ in range(3):
        hits = search.search("backoff")
    assert clock.sleeps == [60.0]
    assert search.sha == base
    assert [(h.path, h.line) for h in hits] == [("src/http/retry.py", 2)]
    assert {r.url.path for r in forge.requests} == {"/search/code"}


TRACEBACK = (
    'Traceback (most recent call last):\n  File "/x/site-packages/src/http/retry.py", line 2\n'
)


def test_without_a_clone_the_pack_names_the_signals_github_cannot_give(tmp_path):
    from tests.fixtures.context.gitrepo import git, make_repo

    search = _client(Forge())
    pack = build_pack(["backoff"], search, ticket_text=f"backoff is wrong\n{TRACEBACK}")
    assert pack.unavailable == ["traceback_frames", "full_text_bm25"]
    assert pack.searches == 1  # the ranking that could not run cost no search
    repo = make_repo(tmp_path / "r", {"src/http/retry.py": "a\nbackoff()\n"})
    search = _client(Forge())
    search.attach_clone(repo, git(repo, "rev-parse", "HEAD"))
    pack = build_pack(["backoff"], search, ticket_text=f"backoff is wrong\n{TRACEBACK}")
    assert pack.unavailable == []
    assert pack.searches == 2  # one code search and the full-text ranking over the clone
    assert pack.files[0].path == "src/http/retry.py"


def _answer(items: list[dict]) -> Forge:
    """A forge whose code search answers ``items`` (a hostile or an edge-case answer)."""

    class Answering(Forge):
        def __call__(self, request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            return httpx.Response(200, json={"total_count": len(items), "items": items})

    return Answering()


def _fragments(count: int, present: int | None) -> list[dict]:
    """``count`` fragments none of whose text is in the file but number ``present`` (1-based)."""
    return [
        {"property": "content", "fragment": "line 7" if n == present else f"absent {n}"}
        for n in range(1, count + 1)
    ]


@pytest.mark.parametrize(
    ("present", "expected"),
    [(1, (7, "content")), (GITHUB_TEXT_MATCHES_READ, (7, "content")), (None, (1, "path"))],
)
def test_a_fragment_within_the_bound_places_the_hit(present, expected):
    texts = {"f.py": "".join(f"line {n}x\n" for n in range(1, 20))}
    fragments = _fragments(GITHUB_TEXT_MATCHES_READ, present)
    search = _client(_answer([{"path": "f.py", "text_matches": fragments}]), contents=texts.get)
    assert [(h.line, h.kind) for h in search.search("seed")] == [expected]


def test_a_fragment_past_the_bound_is_not_looked_for():
    """Twin: the same fragment one past the bound is not read (the hit falls back to the path)."""
    texts = {"f.py": "".join(f"line {n}x\n" for n in range(1, 20))}
    fragments = _fragments(GITHUB_TEXT_MATCHES_READ + 1, GITHUB_TEXT_MATCHES_READ + 1)
    search = _client(_answer([{"path": "f.py", "text_matches": fragments}]), contents=texts.get)
    assert [(h.line, h.kind) for h in search.search("seed")] == [(1, "path")]


def test_results_past_the_page_asked_for_are_not_read():
    texts = {f"f{n}.py": "seed\n" for n in range(GITHUB_SEARCH_PER_PAGE + 5)}
    items = [{"path": path} for path in texts]
    search = _client(_answer(items), contents=texts.get)
    assert len(search.search("seed")) == GITHUB_SEARCH_PER_PAGE


def _cpu_of_answer(scale: int) -> float:
    texts = {"f.py": "".join(f"line {n} text\n" for n in range(2_000 * scale))}
    items = [{"path": "f.py", "text_matches": _fragments(500 * scale, None)}]
    search = _client(_answer(items), contents=texts.get)
    started = time.thread_time()
    search.search("nomatch")
    return time.thread_time() - started


def test_a_hostile_answer_costs_work_linear_in_the_file():
    """Eight times the file and eight times the fragments cost at most 24 times the CPU (the
    product of the two, before the bound: 64 times, 3 s at the larger size)."""
    large = _cpu_of_answer(8)
    if large >= 0.05:
        assert large / max(min(_cpu_of_answer(1) for _ in range(3)), 1e-3) <= 24
    assert large < 1.0


@pytest.mark.parametrize(("extra", "refused"), [(0, False), (1, True)], ids=["at", "past"])
def test_a_query_past_max_query_chars_is_refused_before_it_is_sent(
    monkeypatch: pytest.MonkeyPatch, extra: int, refused: bool
) -> None:
    """``MAX_QUERY_CHARS`` (patched to 40 so the bound, not GitHub's 256, is what is seen): a
    query one character past it is a typed error naming the bound; its twin, exactly at the
    bound, is the query sent."""
    monkeypatch.setattr(github_code_search, "MAX_QUERY_CHARS", 40)
    search = GitHubCodeSearch("https://api.github.test", "t", "acme/api")
    seed = "s" * (40 - len(" repo:acme/api") + extra)
    if refused:
        with pytest.raises(InputError, match="is over 40 chars"):
            search.query(seed)
    else:
        assert search.query(seed) == f"{seed} repo:acme/api" and len(search.query(seed)) == 40
