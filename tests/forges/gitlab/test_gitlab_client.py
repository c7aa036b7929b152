"""GitLabClient and GitLabCodeSearch against httpx.MockTransport answering with GitLab's
documented response shapes: subgroup paths encoded as one segment, offset pagination by
``x-next-page``, merge requests looked up before create, discussions with diff notes, pipeline
jobs as CI jobs, Code Quality and SAST reports as findings, blob search snippets, and
401/403/404/429 with ``Retry-After``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from veranda_dagster.domain.core.bounds import (
    MAX_CI_REPORT_BYTES,
    MAX_COMMENT_CHARS,
    MAX_FORGE_LIST_PAGES,
)
from veranda_dagster.domain.core.errors import InputError, TransientError
from veranda_dagster.domain.core.forge_port import CiJob, Forge
from veranda_dagster.domain.work.code_quality import parse_any_report
from veranda_dagster.domain.work.static_analysis import filter_to_commit, from_findings
from veranda_dagster.forges.gitlab.base import (
    GitLabNotFoundError,
    GitLabPermissionError,
    project_ref,
)
from veranda_dagster.forges.gitlab.ci import LOG_TAIL_BYTES, job_state
from veranda_dagster.forges.gitlab.client import GitLabClient
from veranda_dagster.forges.gitlab.code_search import SEARCH_PER_PAGE, GitLabCodeSearch
from veranda_dagster.http.client import MAX_HTTP_ATTEMPTS, HttpAuthError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gitlab"
TOKEN = "glpat-SECRETSECRETSECRET1"
BASE = "https://gitlab.com"
PROJECT = "acme/platform/billing"
ENC = "/api/v4/projects/acme%2Fplatform%2Fbilling"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def respond(name: str | None = None, status: int = 200, headers=None, body=None):
    payload = fixture(name) if name else body
    return httpx.Response(status, headers=headers or {}, json=payload)


class Router:
    """Answers by (method, raw path), each route from a queue (the last answer repeats)."""

    def __init__(self, routes: dict[tuple[str, str], list[httpx.Response]]) -> None:
        own = httpx.Response(200, json={"id": 99, "username": "project_4711_bot_3c5a0f1e2d"})
        self.routes = {("GET", "/api/v4/user"): [own], **routes}
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        key = (request.method, request.url.raw_path.decode().split("?")[0])
        queue = self.routes.get(key)
        if not queue:
            return httpx.Response(404, json={"message": f"404 {key} not routed"})
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def to(self, method: str, path: str) -> list[httpx.Request]:
        return [
            r
            for r in self.requests
            if r.method == method and r.url.raw_path.decode().split("?")[0] == path
        ]


def gitlab(router: Router, base: str = BASE) -> tuple[GitLabClient, list[float]]:
    waits: list[float] = []
    client = GitLabClient(
        base, TOKEN, transport=httpx.MockTransport(router), sleep=waits.append, clock=lambda: 1000
    )
    return client, waits


def test_subgroup_path_is_one_encoded_segment_and_self_managed_root_is_kept():
    router = Router({("GET", "/gitlab/api/v4/projects/acme%2Fplatform%2Fbilling"): [
        respond("project_subgroup.json")
    ]})  # fmt: skip
    client, _ = gitlab(router, "https://git.acme.io/gitlab")
    project = client.get_project(PROJECT)
    assert project["id"] == 4711 and client.renamed == {}
    assert router.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert project_ref(4711) == "4711"
    for bad in ("billing", "acme//billing", "acme/../billing", "/"):
        with pytest.raises(InputError):
            project_ref(bad)


def test_renamed_project_answers_with_its_new_path_and_the_remote_follows():
    router = Router({("GET", "/api/v4/projects/acme%2Fbilling-old"): [
        respond("project_subgroup.json")
    ]})  # fmt: skip
    client, _ = gitlab(router)
    assert client.get_project("acme/billing-old")["path_with_namespace"] == PROJECT
    assert client.renamed == {"acme/billing-old": PROJECT}
    remote = client.remote("acme/billing-old")
    assert remote.url == f"{BASE}/{PROJECT}.git"
    assert remote.token == TOKEN and TOKEN not in remote.url  # the URL never carries it
    assert TOKEN not in str(remote) and TOKEN not in repr(remote)
    assert str(remote) == f"https://oauth2:***@gitlab.com/{PROJECT}.git"


def test_renamed_project_behind_a_same_origin_redirect_is_followed():
    moved = httpx.Response(301, headers={"location": f"{BASE}{ENC}"})
    router = Router({
        ("GET", "/api/v4/projects/acme%2Fold"): [moved],
        ("GET", ENC): [respond("project_subgroup.json")],
    })  # fmt: skip
    client, _ = gitlab(router)
    assert client.get_project("acme/old")["id"] == 4711
    assert client.find_project("acme/missing") is None


def test_group_projects_walk_x_next_page_with_subgroups():
    path = "/api/v4/groups/acme/projects"
    router = Router({("GET", path): [
        respond("group_projects_page1.json", headers={"x-next-page": "2"}),
        respond("group_projects_page2.json", headers={"x-next-page": ""}),
    ]})  # fmt: skip
    client, _ = gitlab(router)
    projects = client.list_group_projects("acme")
    assert [p["path_with_namespace"] for p in projects] == [
        "acme/platform/billing",
        "acme/platform/ledger",
        "acme/web/storefront",
    ]
    first, second = router.to("GET", path)
    assert first.url.params["include_subgroups"] == "true"
    assert first.url.params["archived"] == "false"
    assert second.url.params["page"] == "2"


def test_pagination_is_bounded():
    path = "/api/v4/groups/acme/projects"
    router = Router({("GET", path): [respond(body=[{"id": 1}], headers={"x-next-page": "2"})]})
    client, _ = gitlab(router)
    assert len(client.list_group_projects("acme")) == MAX_FORGE_LIST_PAGES
    assert len(router.requests) == MAX_FORGE_LIST_PAGES
    assert client.truncated == [
        f"gitlab /groups/acme/projects: more than {MAX_FORGE_LIST_PAGES} pages; later ones not read"
    ]  # said, never silent (and logged)


def test_merge_request_is_looked_up_before_create():
    mrs = f"{ENC}/merge_requests"
    router = Router({("GET", mrs): [respond("merge_requests_open.json")]})
    client, _ = gitlab(router)
    assert isinstance(client, Forge)
    assert client.create_pull_request(PROJECT, "veranda/pay-17", "main", "t", "b") == (
        12,
        "https://gitlab.com/acme/platform/billing/-/merge_requests/12",
    )
    assert router.to("POST", mrs) == []
    assert router.to("GET", mrs)[0].url.params["source_branch"] == "veranda/pay-17"
    pr = client.find_pull_request(PROJECT, "veranda/pay-17")
    assert pr is not None and pr.state == "open" and pr.head_sha.startswith("3f1e2d4c")


def test_a_fork_merge_request_from_a_branch_of_the_same_name_is_not_ours():
    """GitLab's ``source_branch`` filter matches a fork's MR too; only one whose source
    project is the target project is adopted, so a fork's description is never overwritten."""
    mrs = f"{ENC}/merge_requests"
    fork = dict(fixture("merge_requests_open.json")[0], source_project_id=31337)
    router = Router({
        ("GET", mrs): [respond(body=[fork])],
        ("POST", mrs): [respond("merge_request_created.json", 201)],
    })  # fmt: skip
    client, _ = gitlab(router)
    assert client.find_pull_request(PROJECT, "veranda/pay-17") is None
    assert client.create_pull_request(PROJECT, "veranda/pay-17", "main", "t", "b")[0] == 13


def test_merge_request_create_and_the_409_race():
    mrs = f"{ENC}/merge_requests"
    router = Router({
        ("GET", mrs): [respond(body=[])],
        ("POST", mrs): [respond("merge_request_created.json", 201)],
    })  # fmt: skip
    client, _ = gitlab(router)
    assert client.create_pull_request(PROJECT, "veranda/pay-20", "main", "t", "b")[0] == 13
    sent = json.loads(router.to("POST", mrs)[0].content)
    assert sent["source_branch"] == "veranda/pay-20" and sent["description"] == "b"

    raced = dict(fixture("merge_request_created.json"))
    router = Router({
        ("GET", mrs): [respond(body=[]), respond(body=[raced])],
        ("POST", mrs): [respond("merge_request_conflict.json", 409)],
    })  # fmt: skip
    client, _ = gitlab(router)
    assert client.create_pull_request(PROJECT, "veranda/pay-20", "main", "t", "b")[0] == 13


def test_notes_are_one_id_space_and_a_diff_note_is_answered_in_its_discussion():
    disc = f"{ENC}/merge_requests/12/discussions"
    thread = f"{disc}/87805b7c09016a7058e91bdbe7b29d1f284a39e6/notes"
    router = Router({
        ("GET", disc): [respond("discussions.json")],
        ("POST", thread): [respond(body={"id": 1131}, status=201)],
        ("POST", f"{ENC}/merge_requests/12/notes"): [respond(body={"id": 1132}, status=201)],
    })  # fmt: skip
    client, _ = gitlab(router)
    comments = client.list_comments(PROJECT, 12)
    diff = "87805b7c09016a7058e91bdbe7b29d1f284a39e6"
    assert [(c.id, c.thread, c.is_reply, c.path, c.line, c.by_bot) for c in comments] == [
        ("note:1126", None, False, None, None, False),
        ("note:1128", diff, False, "billing/refunds.py", 42, False),
        ("note:1129", diff, True, "billing/refunds.py", 42, True),
    ]  # the system note is not a comment; the access-token user is a bot
    assert [c.by_self for c in comments] == [False, False, True]  # id 99 is our own user
    assert client.reply(PROJECT, 12, comments[1], "done") == "note:1131"
    assert json.loads(router.to("POST", thread)[0].content) == {"body": "done"}
    assert client.comment(PROJECT, 12, "hi") == "note:1132"
    assert client.reply(PROJECT, 12, comments[0], "noted") == "note:1132"  # the conversation
    assert len(router.to("POST", f"{ENC}/merge_requests/12/notes")) == 2
    assert len(router.to("GET", disc)) == 1  # a reply needs no second listing


def test_a_note_past_the_comment_bound_is_cut_with_a_note_like_a_github_comment():
    disc = f"{ENC}/merge_requests/12/discussions"
    long = "please fix " * (MAX_COMMENT_CHARS // 5)
    note = {"id": 7, "body": long, "author": {"username": "ann"}}
    at_bound = {"id": 8, "body": "x" * MAX_COMMENT_CHARS, "author": {"username": "bo"}}
    discussions = [{"id": "d1", "notes": [note]}, {"id": "d2", "notes": [at_bound]}]
    client, _ = gitlab(Router({("GET", disc): [respond(body=discussions)]}))
    cut, kept = client.list_comments(PROJECT, 12)
    assert len(cut.body) < MAX_COMMENT_CHARS + 100 and "[veranda: comment cut at" in cut.body
    assert kept.body == "x" * MAX_COMMENT_CHARS


def test_pipeline_jobs_are_ci_jobs():
    router = Router({
        ("GET", f"{ENC}/pipelines"): [respond("pipelines.json")],
        ("GET", f"{ENC}/pipelines/5502/jobs"): [respond("jobs.json")],
    })  # fmt: skip
    client, _ = gitlab(router)
    jobs = client.list_ci_jobs(PROJECT, "3f1e2d4c5b6a79880716253443526170f0e0d0c0")
    assert [(j.id, j.name, j.state, j.failing, j.done) for j in jobs] == [
        ("9001", "code_quality", "failed", True, True),
        ("9002", "unit", "passed", False, True),
        ("9003", "lint-docs", "neutral", False, True),  # failed, but allowed to
        ("9004", "deploy", "skipped", False, True),  # manual: never starts on its own
        ("9005", "e2e", "running", False, False),
    ]
    assert router.to("GET", f"{ENC}/pipelines")[0].url.params["sha"].startswith("3f1e2d4c")


@pytest.mark.parametrize(
    ("status", "state"),
    [("created", "pending"), ("pending", "pending"), ("preparing", "pending"),
     ("waiting_for_resource", "pending"), ("scheduled", "pending"), ("canceling", "running"),
     ("canceled", "cancelled"), ("a_status_gitlab_adds_later", "neutral")],
)  # fmt: skip
def test_every_job_status_has_one_state(status, state):
    assert job_state({"id": 1, "status": status}) == state


def test_code_quality_report_grounds_findings_and_half_lie_outside_the_commit():
    report = (FIXTURES / "gl-code-quality-report.json").read_bytes()
    art = f"{ENC}/jobs/9001/artifacts"
    router = Router({
        ("GET", f"{ENC}/jobs/9001"): [respond(body=fixture("jobs.json")[0])],
        ("GET", f"{art}/gl-code-quality-report.json"): [
            httpx.Response(200, content=gzip.compress(report))
        ],
        ("GET", f"{art}/gl-sast-report.json"): [respond("error_404.json", 404)],
    })  # fmt: skip
    client, _ = gitlab(router)
    findings = client.ci_findings(PROJECT, CiJob("9001", "code_quality", "failed"))
    assert {(f.severity, f.tool) for f in findings} == {("error", "code_quality")}
    violations = from_findings(findings)
    assert [(v.rule, v.path, v.line) for v in violations] == [
        ("C901", "billing/refunds.py", 40),
        ("F841", "billing/ledger.py", 7),
    ]  # the ``info`` finding is advice
    assert violations[0].threshold == "14 > 10"
    ours, theirs = filter_to_commit(violations, {"billing/refunds.py": {40}})
    assert [v.path for v in ours] == ["billing/refunds.py"]
    assert [v.path for v in theirs] == ["billing/ledger.py"]
    assert client.ci_job_report(PROJECT, CiJob("9001", "code_quality", "failed")).startswith(
        "code_quality: failed"
    )
    with pytest.raises(InputError, match="not a number"):
        client.ci_findings(PROJECT, CiJob("9001/../1", "x", "failed"))


def test_sast_report_parses_to_the_same_violations():
    found = parse_any_report((FIXTURES / "gl-sast-report.json").read_text())
    assert [(v.tool, v.rule, v.path, v.line) for v in found] == [
        ("semgrep", "bandit.B303", "billing/tokens.py", 12)
    ]  # dependency findings (no line) and ``Info`` are dropped
    assert "(Medium)" in found[0].message
    sarif = {"runs": [{"tool": {"driver": {"name": "x"}}, "results": []}]}
    assert parse_any_report(json.dumps(sarif)) == []  # SARIF still reaches its own parser
    assert parse_any_report("no report here") == []


def test_job_log_tail_is_bounded_and_reports_are_capped():
    big = b"x" * (LOG_TAIL_BYTES * 3) + b"\nFAILED tests/test_refunds.py::test_partial\n"
    router = Router({
        ("GET", f"{ENC}/jobs/9001/trace"): [httpx.Response(200, content=big)],
        ("GET", f"{ENC}/jobs/9001/artifacts/huge.json"): [
            httpx.Response(200, content=b"[" + b" " * MAX_CI_REPORT_BYTES + b"]")
        ],
    })  # fmt: skip
    client, _ = gitlab(router)
    tail = client.ci_job_log_tail(PROJECT, CiJob("9001", "unit", "failed"))
    assert tail is not None and len(tail) == LOG_TAIL_BYTES
    assert tail.endswith("test_partial\n")
    with pytest.raises(InputError, match="over"):
        client.job_artifact(PROJECT, 9001, "huge.json")
    with pytest.raises(InputError):
        client.job_artifact(PROJECT, 9001, "../../etc/passwd")
    assert client.job_log_tail(PROJECT, 7) is None  # no such job: 404


@pytest.mark.parametrize(
    ("status", "name", "error"),
    [
        (401, "error_401.json", HttpAuthError),
        (403, "error_403.json", GitLabPermissionError),
        (404, "error_404.json", GitLabNotFoundError),
    ],
)
def test_typed_errors_without_the_token(status, name, error):
    router = Router({("GET", ENC): [respond(name, status)]})
    client, _ = gitlab(router)
    with pytest.raises(error) as caught:
        client.get_project(PROJECT)
    assert TOKEN not in str(caught.value)
    assert len(router.requests) == 1


def test_429_waits_retry_after_or_ratelimit_reset():
    router = Router({("GET", ENC): [
        respond(body={"message": "Retry later"}, status=429, headers={"Retry-After": "3"}),
        respond(body={}, status=429, headers={"RateLimit-Reset": "1005"}),
        respond("project_subgroup.json"),
    ]})  # fmt: skip
    client, waits = gitlab(router)
    assert client.get_project(PROJECT)["id"] == 4711
    assert waits == [3.0, 5.0]


def test_429_is_bounded_and_long_waits_surface():
    router = Router({("GET", ENC): [respond(body={}, status=429, headers={"Retry-After": "1"})]})
    client, waits = gitlab(router)
    with pytest.raises(TransientError):
        client.get_project(PROJECT)
    assert len(router.requests) == MAX_HTTP_ATTEMPTS
    router = Router({("GET", ENC): [respond(body={}, status=429, headers={"Retry-After": "900"})]})
    client, waits = gitlab(router)
    with pytest.raises(TransientError):
        client.get_project(PROJECT)
    assert waits == []


def test_blob_search_places_hits_in_snippets_and_waits_before_the_limit():
    search = f"{ENC}/search"
    router = Router({
        ("GET", search): [respond("blob_search.json")],
        ("GET", f"{ENC}/repository/files/docs%2Frefunds.md/raw"): [
            httpx.Response(200, text="# Refunds\n\nWe call apply_refund here.\n")
        ],
    })  # fmt: skip
    now = [0.0]
    waits: list[float] = []
    code = GitLabCodeSearch(
        BASE,
        TOKEN,
        PROJECT,
        transport=httpx.MockTransport(router),
        sleep=lambda s: (waits.append(s), now.__setitem__(0, now[0] + s)),
        clock=lambda: now[0],
        sha="3f1e2d4c5b6a79880716253443526170f0e0d0c0",
        per_minute=2,
    )
    hits = code.search("apply_refund")
    assert [(h.path, h.line) for h in hits] == [("billing/refunds.py", 40), ("docs/refunds.md", 3)]
    params = router.to("GET", search)[0].url.params
    assert params["scope"] == "blobs" and params["ref"].startswith("3f1e2d4c")
    assert code.read_window("docs/refunds.md", 3).text.startswith("# Refunds")
    code.search("apply_refund")
    assert waits == []
    code.search("apply_refund")  # the third in a minute waits, it does not spend a 429
    assert waits == [60.0]


def test_blob_results_past_the_page_asked_for_are_not_read():
    """An answer of more results than ``SEARCH_PER_PAGE`` is not what was asked: only the page
    is read, so a thousand snippet-less paths cannot cost a thousand raw-file requests. Twin:
    a page of exactly ``SEARCH_PER_PAGE`` is read whole."""
    for extra, read in ((5, SEARCH_PER_PAGE), (0, SEARCH_PER_PAGE)):
        results = [
            {"path": f"f{n}.py", "startline": 1, "data": "no match here"}
            for n in range(SEARCH_PER_PAGE + extra)
        ]
        router = Router({("GET", f"{ENC}/search"): [respond(body=results)]})
        for n in range(SEARCH_PER_PAGE + extra):
            router.routes[("GET", f"{ENC}/repository/files/f{n}.py/raw")] = [
                httpx.Response(200, text="x = 1\nseed_value = 2\n")
            ]
        code = GitLabCodeSearch(
            BASE, TOKEN, PROJECT, transport=httpx.MockTransport(router), sha="3f1e2d4c" * 5
        )
        hits = code.search("seed_value")
        assert len({h.path for h in hits}) == read
        raw = [r for r in router.requests if r.url.path.endswith("/raw")]
        assert len(raw) == read
