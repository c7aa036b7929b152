"""Every client reads an answer as hostile data, through its real fake over loopback: a huge
answer stops at the byte cap, a dripping one at the request's deadline, bad or deeply nested
JSON is a typed error. One mechanism (``http.bounded``) serves them all."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.forges.gitlab.client import GitLabClient
from veranda_dagster.http.bounded import (
    MAX_RESPONSE_BYTES,
    ResponseDeadlineError,
    ResponseJsonError,
    ResponseTooLargeError,
)
from veranda_dagster.sim.github_fake import GitHubFake
from veranda_dagster.sim.gitlab_fake import GitLabFake
from veranda_dagster.sim.http_fake import FakeHttpServer, FakeResponse, dripping, huge_json_list
from veranda_dagster.sim.jira_fake import JiraFake
from veranda_dagster.sim.linear_fake import LinearFake
from veranda_dagster.sim.slack_fake import SlackFake
from veranda_dagster.sources.jira.client import JiraClient
from veranda_dagster.sources.linear.client import LinearClient
from veranda_dagster.sources.slack.client import SlackClient

TOKEN = "tok_hostile_answers_0001"
DRIP_DEADLINE_S = 1.0
HUGE = 300 * 1024 * 1024


@dataclass
class Case:
    """One client against its fake: the path its call asks first, and the call."""

    name: str
    fake: Callable[[Path], FakeHttpServer]
    client: Callable[[Any, float], Any]  # each fake has its own URL fields
    path: str
    call: Callable[[Any], Any]


CASES = [
    Case(
        "github",
        lambda tmp: GitHubFake(tmp, token=TOKEN),
        lambda f, d: GitHubClient(f.base_url, TOKEN, sleep=lambda s: None, deadline_s=d),
        "/repos/acme/app/pulls/7/comments",
        lambda c: c.list_comments("acme/app", 7),
    ),
    Case(
        "gitlab",
        lambda tmp: GitLabFake(tmp, token=TOKEN),
        lambda f, d: GitLabClient(f.base_url, TOKEN, sleep=lambda s: None, deadline_s=d),
        "*/merge_requests/7/discussions",
        lambda c: c.list_comments("acme/app", 7),
    ),
    Case(
        "linear",
        lambda tmp: LinearFake(token=TOKEN),
        lambda f, d: LinearClient(
            f.graphql_url, TOKEN, sleep=lambda s: None, bot_user_id="u1", deadline_s=d
        ),
        "/graphql",
        lambda c: c.list_issues(None),
    ),
    Case(
        "jira",
        lambda tmp: JiraFake(TOKEN),
        lambda f, d: JiraClient(
            f.base_url, TOKEN, email=f.email, label="veranda", sleep=lambda s: None, deadline_s=d
        ),
        "*/issue/ENG-1*",
        lambda c: c.get_issue("ENG-1"),
    ),
    Case(
        "slack",
        lambda tmp: SlackFake(token=TOKEN),
        lambda f, d: SlackClient(f.api_url, TOKEN, sleep=lambda s: None, deadline_s=d),
        "/api/conversations.history",
        lambda c: c.history("C111", None),
    ),
]


@contextmanager
def serving(case: Case, tmp_path: Path, deadline_s: float = 60.0) -> Iterator[tuple[Any, Any]]:
    with case.fake(tmp_path) as fake:
        client = case.client(fake, deadline_s)
        try:
            yield fake, client
        finally:
            client.close()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_300_mb_answer_stops_at_the_byte_cap_with_a_typed_error(case: Case, tmp_path) -> None:
    with serving(case, tmp_path) as (fake, client):
        fake.answer_next(case.path, lambda: FakeResponse(200, huge_json_list(HUGE)))
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLargeError, match=f"over {MAX_RESPONSE_BYTES} bytes"):
                case.call(client)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 3 * MAX_RESPONSE_BYTES  # chunks and their join, never the 300 MB


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_dripping_answer_ends_at_the_request_deadline(case: Case, tmp_path) -> None:
    """``MAX_REQUEST_S`` (the ``deadline_s`` it feeds, one second here) against an answer that
    drips a chunk every 0.1 s for 24 s: never a read timeout, ended at the deadline."""
    with serving(case, tmp_path, deadline_s=DRIP_DEADLINE_S) as (fake, client):
        fake.answer_next(case.path, lambda: FakeResponse(200, dripping(b'{"ok": true}' * 20, 0.1)))
        started = time.monotonic()
        with pytest.raises(ResponseDeadlineError, match="at its deadline"):
            case.call(client)
        took = time.monotonic() - started
    assert DRIP_DEADLINE_S <= took < DRIP_DEADLINE_S + 1.0  # 24 s of drip, cut at the deadline


BAD_JSON = {
    "truncated": b'{"data": {"issues": ',
    "not json": b"<html>502 Bad Gateway</html>",
    "nested": b"[" * 200_000 + b"]" * 200_000,  # RecursionError in the parser
}


@pytest.mark.parametrize("body", BAD_JSON.values(), ids=BAD_JSON.keys())
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_json_is_a_typed_error_on_every_client(case: Case, body: bytes, tmp_path) -> None:
    with serving(case, tmp_path) as (fake, client):
        answer = FakeResponse(200, body, content_type="application/json")
        fake.answer_next(case.path, lambda: answer)
        with pytest.raises(InputError) as caught:
            case.call(client)
        assert [r.fault for r in fake.requests_to(case.path)] == ["injected 200"]
    assert not isinstance(caught.value, RecursionError)
    assert isinstance(caught.value, ResponseJsonError) or "JSON" in str(caught.value)
