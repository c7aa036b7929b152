"""The GitHub fake over real bare repos, driven by the product's GitHub clients and git."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest

from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.forges.github.code_search import GitHubCodeSearch
from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.sim.github_fake import GitHubFake
from veranda_dagster.sim.sample_org import (
    BILLING,
    INVOICE_BUGGY_LINE,
    INVOICE_FIXED_LINE,
    SampleOrg,
    create_sample_org,
)

TOKEN = "ghs_fake_github_token_1"


def push_branch(org: SampleOrg, tmp: Path, branch: str, edit: dict[str, str]) -> str:
    """Clone, commit ``edit`` on ``branch``, push: what the product's Workspace does."""
    work = tmp / f"clone-{branch.replace('/', '_')}"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "clone", "-q", str(org.bare(BILLING)), str(work)], check=True)
    subprocess.run([*git, "checkout", "-q", "-B", branch], cwd=work, check=True)
    for rel, text in edit.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    subprocess.run([*git, "commit", "-qam", "edit", "--allow-empty"], cwd=work, check=True)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "add", "--allow-empty"], cwd=work, check=True)
    subprocess.run([*git, "push", "-q", "origin", branch], cwd=work, check=True)
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True)
    return out.stdout.strip()


@pytest.fixture()
def org(tmp_path: Path) -> SampleOrg:
    return create_sample_org(tmp_path / "org")


@pytest.fixture()
def gh(org: SampleOrg):
    with GitHubFake(org.git_base, token=TOKEN) as fake:
        yield fake


def api(gh: GitHubFake) -> httpx.Client:
    return httpx.Client(base_url=gh.base_url, headers={"Authorization": f"Bearer {TOKEN}"})


def test_repos_contents_and_bad_credentials(gh: GitHubFake) -> None:
    with api(gh) as http:
        repo = http.get(f"/repos/{BILLING}").json()
        assert repo["default_branch"] == "main" and repo["full_name"] == BILLING
        names = [r["full_name"] for r in http.get("/orgs/acme/repos").json()]
        assert names == ["acme/billing", "acme/ledger", "acme/storefront"]
        listing = http.get(f"/repos/{BILLING}/contents/billing").json()
        assert {e["name"] for e in listing} == {"__init__.py", "invoice.py"}
        assert http.get(f"/repos/{BILLING}/contents/nope.py").status_code == 404
        tree = http.get(f"/repos/{BILLING}/git/trees/main", params={"recursive": 1}).json()
        assert "billing/invoice.py" in {t["path"] for t in tree["tree"]}
    r = httpx.get(f"{gh.base_url}/repos/{BILLING}", headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.json()["message"] == "Bad credentials"


def test_code_search_through_the_product_client(gh: GitHubFake) -> None:
    search = GitHubCodeSearch(gh.base_url, TOKEN, BILLING, sleep=lambda s: None)
    hits = search.search("invoice_total_cents")
    assert {h.path for h in hits} == {"billing/invoice.py", "tests/test_invoice.py"}
    line = next(h for h in hits if h.path == "billing/invoice.py")
    assert line.line == 13 and "def invoice_total_cents" in line.text
    assert len(search.sha) == 40
    assert search.search("no_such_identifier_anywhere") == []


def test_code_search_rules(gh: GitHubFake) -> None:
    headers = {"Accept": "application/vnd.github.text-match+json"}
    with api(gh) as http:
        body = http.get(
            "/search/code",
            params={"q": "quantity repo:acme/billing language:python"},
            headers=headers,
        ).json()
        assert [i["path"] for i in body["items"]] == ["billing/invoice.py"]
        match = body["items"][0]["text_matches"][0]
        start, end = match["matches"][0]["indices"]
        assert match["fragment"][start:end].lower() == "quantity"
        assert http.get("/search/code", params={"q": "repo:acme/billing"}).status_code == 422
        assert http.get("/search/code", params={"q": "x repo:acme/ghost"}).status_code == 422


def test_pull_request_lifecycle_with_product_client(
    gh: GitHubFake, org: SampleOrg, tmp_path: Path
) -> None:
    sha = push_branch(org, tmp_path, "veranda/eng-1", {"NOTES.md": "hello\n"})
    client = GitHubClient(gh.base_url, TOKEN, sleep=lambda s: None)
    assert client.find_pull_request(BILLING, "veranda/eng-1") is None
    number, url = client.create_pull_request(BILLING, "veranda/eng-1", "main", "ENG-1", "b")
    assert url.endswith(f"/{BILLING}/pull/{number}")
    # a second create adopts the existing PR (the real 422 "already exists")
    assert client.create_pull_request(BILLING, "veranda/eng-1", "main", "ENG-1", "b") == (
        number,
        url,
    )
    found = client.find_pull_request(BILLING, "veranda/eng-1")
    assert found is not None and found.head_sha == sha
    client.update_pull_request_body(BILLING, number, "new body")
    assert gh.all_pulls(BILLING)[0]["body"] == "new body"
    with api(gh) as http:
        files = http.get(f"/repos/{BILLING}/pulls/{number}/files").json()
    assert [f["filename"] for f in files] == ["NOTES.md"] and files[0]["status"] == "added"
    cid = client.comment(BILLING, number, "summary")
    assert [c.body for c in client.list_comments(BILLING, number)] == ["summary"]
    gh.human_review_comment(BILLING, number, "rename this", "NOTES.md", 1)
    review, _summary = client.list_comments(BILLING, number)
    assert (review.path, review.thread, review.is_reply) == ("NOTES.md", review.id[7:], False)
    answer = client.reply(BILLING, number, review, "done")
    threaded = [c for c in client.list_comments(BILLING, number) if c.thread == review.thread]
    assert [(c.id, c.body, c.is_reply) for c in threaded] == [
        (review.id, "rename this", False),
        (answer, "done", True),
    ]
    assert cid.startswith("issue:") and answer.startswith("review:")


def wait_completed(client: GitHubClient, sha: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = client.list_ci_jobs(BILLING, sha)
        if jobs and all(j.done for j in jobs):
            return jobs
        time.sleep(0.2)
    raise AssertionError("CI did not finish")


def test_ci_runs_the_repo_make_targets(gh: GitHubFake, org: SampleOrg, tmp_path: Path) -> None:
    from veranda_dagster.sim.sample_org import INVOICE_PY

    fixed = INVOICE_PY.replace(INVOICE_BUGGY_LINE, INVOICE_FIXED_LINE)
    good = push_branch(org, tmp_path, "good", {"billing/invoice.py": fixed})
    lint_bad = push_branch(org, tmp_path, "lintbad", {"billing/extra.py": "import os\n"})
    client = GitHubClient(gh.base_url, TOKEN, sleep=lambda s: None)
    jobs = {j.name: j.state for j in wait_completed(client, good)}
    assert jobs == {"lint": "passed", "test": "passed"}
    bad = {j.name: j for j in wait_completed(client, lint_bad)}
    assert bad["lint"].state == "failed" and bad["test"].state == "passed"
    (note,) = client.ci_findings(BILLING, bad["lint"])
    assert (note.path, note.start_line, note.rule, note.tool) == (
        "billing/extra.py",
        1,
        "F401",
        "lint",
    )
    log = client.ci_job_log_tail(BILLING, bad["lint"])
    assert log is not None and "F401" in log


def test_ci_that_never_finishes_and_a_hung_command(org: SampleOrg, tmp_path: Path) -> None:
    with GitHubFake(org.git_base, token=TOKEN, ci_mode="never") as gh:
        client = GitHubClient(gh.base_url, TOKEN, sleep=lambda s: None)
        sha = push_branch(org, tmp_path, "a", {"x.md": "x\n"})
        time.sleep(0.3)
        assert {j.state for j in client.list_ci_jobs(BILLING, sha)} == {"running"}
    hang = {"Makefile": "test:\n\t@sleep 30\nlint:\n\t@true\n"}
    with GitHubFake(org.git_base, token=TOKEN, ci_command_timeout_s=1.0) as gh:
        client = GitHubClient(gh.base_url, TOKEN, sleep=lambda s: None)
        sha = push_branch(org, tmp_path, "hang", hang)
        started = time.monotonic()
        jobs = {j.name: j.state for j in wait_completed(client, sha, timeout=20)}
        assert jobs == {"lint": "passed", "test": "failed"}  # GitHub's timed_out fails
        assert time.monotonic() - started < 10


def test_429_with_retry_after_is_waited_out(gh: GitHubFake) -> None:
    waits: list[float] = []
    client = GitHubClient(gh.base_url, TOKEN, sleep=waits.append)
    gh.fail_next(f"/repos/{BILLING}/pulls", 429, retry_after=4)
    assert client.find_pull_request(BILLING, "nothing") is None
    assert waits == [4.0]


def test_wrong_token_is_auth_error(gh: GitHubFake) -> None:
    with pytest.raises(HttpAuthError):
        GitHubClient(gh.base_url, "ghs_wrong", sleep=lambda s: None).list_ci_jobs(BILLING, "main")


def test_a_fork_pull_request_with_our_branch_name_is_not_adopted(
    gh: GitHubFake, org: SampleOrg, tmp_path: Path
) -> None:
    """A fork in the same org opens a PR from ``veranda/eng-2`` (its head label reads
    ``acme:veranda/eng-2``, what the client filters by); the client finds no PR of ours,
    opens its own, and the fork's description is never written."""
    fork = gh.fork_pull_request(BILLING, f"{BILLING}-fork", "veranda/eng-2", "mine, not yours")
    client = GitHubClient(gh.base_url, TOKEN, sleep=lambda s: None)
    assert client.find_pull_request(BILLING, "veranda/eng-2") is None
    push_branch(org, tmp_path, "veranda/eng-2", {"NOTES.md": "ours\n"})
    number, _ = client.create_pull_request(BILLING, "veranda/eng-2", "main", "ENG-2", "ours")
    assert number != fork
    found = client.find_pull_request(BILLING, "veranda/eng-2")
    assert found is not None and found.number == number
    client.update_pull_request_body(BILLING, found.number, "updated")
    bodies = {p["number"]: p["body"] for p in gh.all_pulls(BILLING)}
    assert bodies == {fork: "mine, not yours", number: "updated"}
