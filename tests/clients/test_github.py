"""``GitHubClient`` through ``httpx.MockTransport`` with recorded response shapes: the real
request building (headers, paths, pagination) and parsing, plus GitHub's 403/429 rate limits."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from veranda_dagster.clients._http import HttpAuthError
from veranda_dagster.clients.github import GitHubClient
from veranda_dagster.domain.errors import TransientError
from veranda_dagster.domain.work.forge import Forge

FIX = Path(__file__).parents[1] / "fixtures" / "github"
API = "https://api.github.test"
TOKEN = "ghs_testtoken0123456789abcdef"


def body(name: str):
    return json.loads((FIX / name).read_text())


class Recorder:
    """Routes ``(method, path)`` to a queue of responses and records every request."""

    def __init__(self, routes: dict[tuple[str, str], list[httpx.Response]]) -> None:
        self.routes = routes
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        queue = self.routes.get((request.method, request.url.path))
        if not queue:
            return httpx.Response(404, json={"message": "Not Found"})
        return queue.pop(0) if len(queue) > 1 else queue[0]


def client(routes, **kwargs) -> tuple[GitHubClient, Recorder, list[float]]:
    rec, slept = Recorder(routes), []
    gh = GitHubClient(API, TOKEN, transport=httpx.MockTransport(rec), sleep=slept.append, **kwargs)
    return gh, rec, slept


def ok(name: str, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body(name), headers=headers)


def test_it_is_a_forge():
    assert isinstance(GitHubClient(API, TOKEN), Forge)


def test_find_then_create_pull_request_with_githubs_headers():
    gh, rec, _ = client(
        {
            ("GET", "/repos/acme/app/pulls"): [httpx.Response(200, json=[])],
            ("POST", "/repos/acme/app/pulls"): [ok("pull_created.json", 201)],
        }
    )
    assert gh.find_pull_request("acme/app", "veranda/eng-7") is None
    assert gh.create_pull_request("acme/app", "veranda/eng-7", "main", "T", "B") == (
        1348,
        "https://github.com/acme/app/pull/1348",
    )
    find, create = rec.requests
    assert find.url.params["head"] == "acme:veranda/eng-7" and find.url.params["state"] == "open"
    assert find.headers["authorization"] == f"Bearer {TOKEN}"
    assert find.headers["x-github-api-version"] == "2022-11-28"
    assert find.headers["accept"] == "application/vnd.github+json"
    assert json.loads(create.content) == {
        "title": "T", "head": "veranda/eng-7", "base": "main", "body": "B", "draft": False,
    }  # fmt: skip


def test_a_422_already_exists_adopts_the_existing_pull_request():
    gh, _, _ = client(
        {
            ("POST", "/repos/acme/app/pulls"): [ok("pull_exists_422.json", 422)],
            ("GET", "/repos/acme/app/pulls"): [ok("pulls_open_for_branch.json")],
        }
    )
    assert gh.create_pull_request("acme/app", "veranda/eng-7", "main", "T", "B") == (
        1347,
        "https://github.com/acme/app/pull/1347",
    )
    pr = gh.find_pull_request("acme/app", "veranda/eng-7")
    assert pr is not None and (pr.body, pr.head_sha[:7]) == ("old body", "6dcb09b")


def test_check_runs_follow_the_link_header():
    path = "/repos/acme/app/commits/ce58745/check-runs"
    nxt = f'<{API}{path}?filter=latest&per_page=100&page=2>; rel="next", '
    nxt += f'<{API}{path}?page=2>; rel="last"'
    gh, rec, _ = client(
        {("GET", path): [ok("check_runs_page1.json", link=nxt), ok("check_runs_page2.json")]}
    )
    runs = gh.list_check_runs("acme/app", "ce58745")
    assert [(r.id, r.name, r.status, r.conclusion) for r in runs] == [
        (4, "lint", "completed", "failure"),
        (5, "unit", "in_progress", None),
    ]
    assert runs[0].failed and not runs[1].completed and runs[0].app == "github-actions"
    assert rec.requests[0].url.params["filter"] == "latest"
    assert rec.requests[1].url.params["page"] == "2"


def test_check_run_polls_are_conditional_and_a_304_reuses_the_last_answer():
    path = "/repos/acme/app/commits/ce58745/check-runs"
    page = body("check_runs_page2.json")
    gh, rec, _ = client(
        {
            ("GET", path): [
                httpx.Response(200, json=page, headers={"ETag": '"v1"'}),
                httpx.Response(304, headers={"ETag": '"v1"'}),
                httpx.Response(200, json={"total_count": 0, "check_runs": []}),
            ]
        }
    )
    first = gh.list_check_runs("acme/app", "ce58745")
    second = gh.list_check_runs("acme/app", "ce58745")
    assert "if-none-match" not in rec.requests[0].headers
    assert rec.requests[1].headers["if-none-match"] == '"v1"'
    assert second == first and [r.name for r in second] == ["unit"]
    assert gh.not_modified == 1
    assert gh.list_check_runs("acme/app", "ce58745") == []  # a changed answer is read again


def test_annotations_output_and_job_log_via_redirect_without_our_token():
    log_url = "https://pipelines.actions.test/logs/4.txt?sig=abc"
    gh, rec, _ = client(
        {
            ("GET", "/repos/acme/app/check-runs/4/annotations"): [ok("annotations_4.json")],
            ("GET", "/repos/acme/app/check-runs/4"): [ok("check_run_4.json")],
            ("GET", "/repos/acme/app/actions/jobs/4/logs"): [
                httpx.Response(302, headers={"location": log_url})
            ],
            ("GET", "/logs/4.txt"): [httpx.Response(200, text="step 1\nError: lint failed\n")],
        }
    )
    (annotation,) = gh.list_annotations("acme/app", 4)
    assert annotation["message"] == "`slugify` is too complex (21 > 15)"
    output = gh.get_check_run_output("acme/app", 4)
    assert output.startswith("ruff\n\n2 errors") and "Line too long" in output
    assert gh.get_check_run_log("acme/app", 4) == "step 1\nError: lint failed\n"
    log_request = rec.requests[-1]
    assert log_request.url.host == "pipelines.actions.test"
    assert "authorization" not in log_request.headers


def test_comments_carry_authors_and_threads():
    gh, rec, _ = client(
        {
            ("GET", "/repos/acme/app/pulls/7/comments"): [ok("review_comments.json")],
            ("GET", "/repos/acme/app/issues/7/comments"): [ok("issue_comments.json")],
            ("POST", "/repos/acme/app/issues/7/comments"): [ok("comment_created.json", 201)],
            ("POST", "/repos/acme/app/pulls/7/comments/10/replies"): [
                ok("comment_created.json", 201)
            ],
        }
    )
    review = gh.list_review_comments("acme/app", 7)
    issue = gh.list_issue_comments("acme/app", 7)
    assert [(c.id, c.author, c.by_bot, c.path, c.line) for c in review] == [
        (10, "octocat", False, "app/text.py", 2),
        (11, "veranda-app[bot]", True, "app/text.py", None),
    ]
    assert review[1].in_reply_to == 10
    assert [(c.key, c.by_bot) for c in issue] == [("issue:1", False), ("issue:2", True)]
    assert gh.create_issue_comment("acme/app", 7, "hello") == 1234
    assert gh.reply_to_review_comment("acme/app", 7, 10, "thanks") == 1234
    assert json.loads(rec.requests[-1].content) == {"body": "thanks"}


def test_secondary_rate_limit_403_waits_retry_after_then_succeeds():
    gh, _, slept = client(
        {
            ("POST", "/repos/acme/app/issues/7/comments"): [
                ok("secondary_rate_limit.json", 403, **{"retry-after": "30"}),
                ok("comment_created.json", 201),
            ]
        }
    )
    assert gh.create_issue_comment("acme/app", 7, "hi") == 1234
    assert slept == [30.0]


def test_secondary_limit_without_retry_after_waits_a_minute():
    gh, _, slept = client(
        {
            ("GET", "/repos/acme/app/issues/7/comments"): [
                ok("secondary_rate_limit.json", 403),
                ok("issue_comments.json"),
            ]
        }
    )
    assert len(gh.list_issue_comments("acme/app", 7)) == 2 and slept == [60.0]


def test_primary_limit_waits_until_reset_and_a_long_reset_is_transient():
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000012"}
    gh, _, slept = client(
        {
            ("GET", "/repos/acme/app/issues/7/comments"): [
                ok("primary_rate_limit.json", 403, **headers),
                ok("issue_comments.json"),
            ]
        },
        clock=lambda: 1_000_000.0,
    )
    gh.list_issue_comments("acme/app", 7)
    assert slept == [12.0]
    far = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1003600"}
    gh, _, slept = client(
        {("GET", "/repos/acme/app/issues/7/comments"): [ok("primary_rate_limit.json", 429, **far)]},
        clock=lambda: 1_000_000.0,
    )
    with pytest.raises(TransientError, match=r"rate limited.*retry in 3600s"):
        gh.list_issue_comments("acme/app", 7)
    assert slept == []


def test_a_plain_403_is_a_permission_error_and_401_names_the_token():
    gh, rec, slept = client({("POST", "/repos/acme/app/pulls"): [ok("forbidden.json", 403)]})
    with pytest.raises(HttpAuthError, match=r"lacks permission.*not accessible") as err:
        gh.create_pull_request("acme/app", "h", "main", "t", "b")
    assert slept == [] and len(rec.requests) == 1 and TOKEN not in str(err.value)
    gh, _, _ = client({("GET", "/repos/acme/app/pulls"): [ok("bad_credentials.json", 401)]})
    with pytest.raises(HttpAuthError, match="GITHUB_TOKEN"):
        gh.find_pull_request("acme/app", "x")
