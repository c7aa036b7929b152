"""``GitHubClient`` through ``httpx.MockTransport`` with recorded response shapes: the real
request building (headers, paths, pagination) and parsing, plus GitHub's 403/429 rate limits."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from veranda_dagster.domain.core.errors import InputError, TransientError
from veranda_dagster.domain.core.forge_port import CiJob, Comment, Forge
from veranda_dagster.domain.core.models import CI_FAILING_STATES, CI_RUNNING_STATES
from veranda_dagster.forges.github import client as github_client
from veranda_dagster.forges.github.client import GitHubClient, graphql_url
from veranda_dagster.forges.github.shapes import FAILING_CONCLUSIONS, check_run_state
from veranda_dagster.http.client import HttpAuthError

FIX = Path(__file__).parents[2] / "fixtures" / "github"
API = "https://api.github.test"
TOKEN = "ghs_testtoken0123456789abcdef"


def body(name: str):
    return json.loads((FIX / name).read_text())


class Recorder:
    """Routes ``(method, path)`` to a queue of responses and records every request."""

    def __init__(self, routes: dict[tuple[str, str], list[httpx.Response]]) -> None:
        self.routes = {("GET", "/user"): [httpx.Response(200, json=OWN_USER)], **routes}
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        queue = self.routes.get((request.method, request.url.path))
        if not queue:
            return httpx.Response(404, json={"message": "Not Found"})
        return queue.pop(0) if len(queue) > 1 else queue[0]


def client(routes, **kwargs) -> tuple[GitHubClient, Recorder, list[float]]:
    rec, slept = Recorder(routes), list[float]()
    gh = GitHubClient(API, TOKEN, transport=httpx.MockTransport(rec), sleep=slept.append, **kwargs)
    return gh, rec, slept


def ok(name: str, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body(name), headers=headers)


NO_REVIEW_COMMENTS = httpx.Response(200, json=[])
OWN_USER = {"login": "veranda-app[bot]", "id": 41000001, "type": "Bot"}
"""``GET /user`` for our token: the account ``review_comments.json``'s bot reply is from."""


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
    jobs = gh.list_ci_jobs("acme/app", "ce58745")
    assert jobs == [CiJob("4", "lint", "failed"), CiJob("5", "unit", "running")]
    assert jobs[0].failing and jobs[0].done and not jobs[1].done
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
    first = gh.list_ci_jobs("acme/app", "ce58745")
    second = gh.list_ci_jobs("acme/app", "ce58745")
    assert "if-none-match" not in rec.requests[0].headers
    assert rec.requests[1].headers["if-none-match"] == '"v1"'
    assert second == first and [r.name for r in second] == ["unit"]
    assert gh.not_modified == 1
    assert gh.list_ci_jobs("acme/app", "ce58745") == []  # a changed answer is read again


CONCLUSIONS = [
    "success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required",
    "startup_failure", "stale", None, "some_future_conclusion",
]  # fmt: skip


@pytest.mark.parametrize("conclusion", CONCLUSIONS)
def test_a_completed_check_run_fails_exactly_when_github_says_its_conclusion_fails(conclusion):
    state = check_run_state("completed", conclusion)
    assert (state in CI_FAILING_STATES) == (conclusion in FAILING_CONCLUSIONS)
    assert state not in CI_RUNNING_STATES


@pytest.mark.parametrize(
    ("status", "state"),
    [("queued", "pending"), ("requested", "pending"), ("waiting", "pending"),
     ("pending", "pending"), ("in_progress", "running")],
)  # fmt: skip
def test_an_unfinished_check_run_is_pending_or_running(status, state):
    assert check_run_state(status, None) == state


def test_findings_report_and_job_log_via_redirect_without_our_token():
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
    lint = CiJob("4", "lint", "failed")
    (finding,) = gh.ci_findings("acme/app", lint)
    assert (finding.path, finding.start_line, finding.end_line) == ("app/text.py", 12, 12)
    assert (finding.rule, finding.severity, finding.tool) == ("C901", "error", "lint")
    assert finding.message == "`slugify` is too complex (21 > 15)"
    output = gh.ci_job_report("acme/app", lint)
    assert output.startswith("ruff\n\n2 errors") and "Line too long" in output
    assert gh.ci_job_log_tail("acme/app", lint) == "step 1\nError: lint failed\n"
    log_request = rec.requests[-1]
    assert log_request.url.host == "pipelines.actions.test"
    assert "authorization" not in log_request.headers


def test_annotation_levels_become_severities_and_an_untitled_one_takes_its_rule_from_the_message():
    page = [
        *body("annotations_4.json"),
        {"path": "app/x.py", "start_line": 3, "end_line": 1, "annotation_level": "warning",
         "title": "", "message": "F401 `os` imported but unused"},
        {"path": "README.md", "start_line": 2, "end_line": 2, "annotation_level": "notice",
         "title": "Spell Checker", "message": "Check your spelling for 'banaas'."},
        {"path": "", "start_line": 1, "annotation_level": "failure", "message": "no file"},
    ]  # fmt: skip
    gh, _, _ = client(
        {("GET", "/repos/acme/app/check-runs/4/annotations"): [httpx.Response(200, json=page)]}
    )
    found = gh.ci_findings("acme/app", CiJob("4", "lint", "failed"))
    assert [(f.path, f.start_line, f.end_line, f.rule, f.severity) for f in found] == [
        ("app/text.py", 12, 12, "C901", "error"),
        ("app/x.py", 3, None, "F401", "warning"),  # an end before the start is one line
        ("README.md", 2, 2, "Spell Checker", "notice"),
    ]  # the annotation on no file is not a finding
    with pytest.raises(InputError, match="not a number"):
        gh.ci_job_report("acme/app", CiJob("../4", "lint", "failed"))


def test_comments_are_one_id_space_with_their_threads():
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
    comments = gh.list_comments("acme/app", 7)
    assert [(c.id, c.author, c.by_bot, c.thread, c.is_reply, c.path, c.line) for c in comments] == [
        ("review:10", "octocat", False, "10", False, "app/text.py", 2),
        ("review:11", "veranda-app[bot]", True, "10", True, "app/text.py", None),
        ("issue:1", "octocat", False, None, False, None, None),
        ("issue:2", "codecov[bot]", True, None, False, None, None),
    ]  # the ids the feedback phase stored before there was one id space
    assert comments[0].diff_hunk and comments[1].bot_author
    assert [c.by_self for c in comments] == [False, True, False, False]  # by id, not by login
    assert gh.comment("acme/app", 7, "hello") == "issue:1234"
    assert gh.reply("acme/app", 7, comments[0], "thanks") == "review:1234"
    assert json.loads(rec.requests[-1].content) == {"body": "thanks"}
    # a reply to a reply goes to the thread's root, the one GitHub's endpoint takes
    assert gh.reply("acme/app", 7, comments[1], "again") == "review:1234"
    assert rec.requests[-1].url.path == "/repos/acme/app/pulls/7/comments/10/replies"
    # an answer to a conversation comment is a new conversation comment
    assert gh.reply("acme/app", 7, comments[2], "noted") == "issue:1234"
    assert rec.requests[-1].url.path == "/repos/acme/app/issues/7/comments"
    with pytest.raises(InputError, match="not a comment id"):
        gh.reply("acme/app", 7, Comment("x", "a", "b", thread="1/../2"), "no")


def test_secondary_rate_limit_403_waits_retry_after_then_succeeds():
    gh, _, slept = client(
        {
            ("POST", "/repos/acme/app/issues/7/comments"): [
                ok("secondary_rate_limit.json", 403, **{"retry-after": "30"}),
                ok("comment_created.json", 201),
            ]
        }
    )
    assert gh.comment("acme/app", 7, "hi") == "issue:1234"
    assert slept == [30.0]


def test_secondary_limit_without_retry_after_waits_a_minute(monkeypatch: pytest.MonkeyPatch):
    """A secondary limit that names no wait is waited ``SECONDARY_WAIT_S`` (GitHub's "at
    least a minute"; patched here so the wait is seen to be the constant's)."""
    monkeypatch.setattr(github_client, "SECONDARY_WAIT_S", 7.0)
    gh, _, slept = client(
        {
            ("GET", "/repos/acme/app/pulls/7/comments"): [NO_REVIEW_COMMENTS],
            ("GET", "/repos/acme/app/issues/7/comments"): [
                ok("secondary_rate_limit.json", 403),
                ok("issue_comments.json"),
            ],
        }
    )
    assert len(gh.list_comments("acme/app", 7)) == 2 and slept == [7.0]


def test_primary_limit_waits_until_reset_and_a_long_reset_is_transient():
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000012"}
    gh, _, slept = client(
        {
            ("GET", "/repos/acme/app/pulls/7/comments"): [NO_REVIEW_COMMENTS],
            ("GET", "/repos/acme/app/issues/7/comments"): [
                ok("primary_rate_limit.json", 403, **headers),
                ok("issue_comments.json"),
            ],
        },
        clock=lambda: 1_000_000.0,
    )
    gh.list_comments("acme/app", 7)
    assert slept == [12.0]
    far = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1003600"}
    gh, _, slept = client(
        {
            ("GET", "/repos/acme/app/pulls/7/comments"): [NO_REVIEW_COMMENTS],
            ("GET", "/repos/acme/app/issues/7/comments"): [
                ok("primary_rate_limit.json", 429, **far)
            ],
        },
        clock=lambda: 1_000_000.0,
    )
    with pytest.raises(TransientError, match=r"rate limited.*retry in 3600s"):
        gh.list_comments("acme/app", 7)
    assert slept == []


def test_a_plain_403_is_a_permission_error_and_401_names_the_token():
    gh, rec, slept = client({("POST", "/repos/acme/app/pulls"): [ok("forbidden.json", 403)]})
    with pytest.raises(HttpAuthError, match=r"lacks permission.*not accessible") as err:
        gh.create_pull_request("acme/app", "h", "main", "t", "b")
    assert slept == [] and len(rec.requests) == 1 and TOKEN not in str(err.value)
    gh, _, _ = client({("GET", "/repos/acme/app/pulls"): [ok("bad_credentials.json", 401)]})
    with pytest.raises(HttpAuthError, match="GITHUB_TOKEN"):
        gh.find_pull_request("acme/app", "x")


def test_an_installation_token_learns_its_bot_user_from_graphql_once():
    """``GET /user`` is closed to an app's installation token (403); GraphQL's ``viewer`` is
    the app's bot user, and the id is asked once per client."""
    viewer = {"data": {"viewer": {"databaseId": 41000001}}}
    gh, rec, _ = client(
        {
            ("GET", "/user"): [ok("forbidden.json", 403)],
            ("POST", "/graphql"): [httpx.Response(200, json=viewer)],
            ("GET", "/repos/acme/app/pulls/7/comments"): [ok("review_comments.json")],
            ("GET", "/repos/acme/app/issues/7/comments"): [ok("issue_comments.json")],
        }
    )
    assert [c.by_self for c in gh.list_comments("acme/app", 7)] == [False, True, False, False]
    gh.list_comments("acme/app", 7)
    asked = [r.url.path for r in rec.requests if r.url.path in ("/user", "/graphql")]
    assert asked == ["/user", "/graphql"]


def test_graphql_sits_beside_the_rest_base_on_enterprise_server():
    assert graphql_url("https://api.github.com") == "https://api.github.com/graphql"
    assert graphql_url("https://ghe.acme.io/api/v3/") == "https://ghe.acme.io/api/graphql"


def test_a_pull_request_whose_head_is_a_fork_is_not_ours():
    """Same org, same branch name, a fork's head repository: GitHub's ``head=`` filter lets it
    through (the label reads ``acme:veranda/eng-7``); the client does not adopt it."""
    fork = body("pulls_open_for_branch.json")
    fork[0]["head"]["repo"] = {"full_name": "acme/app-fork"}
    gh, _, _ = client({("GET", "/repos/acme/app/pulls"): [httpx.Response(200, json=fork)]})
    assert gh.find_pull_request("acme/app", "veranda/eng-7") is None
