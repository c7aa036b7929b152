"""The GitLab fake over real bare repositories in subgroups, driven by the product's GitLab
clients and by git over http with the product's askpass (the token in no argv)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from veranda_dagster.domain.clone.diff_hunks import changed_lines
from veranda_dagster.domain.clone.git_command import git_askpass, git_env
from veranda_dagster.domain.core.forge_port import human_comments
from veranda_dagster.domain.deliver.ci import collect_violations
from veranda_dagster.domain.work.static_analysis import filter_to_commit, from_findings
from veranda_dagster.forges.gitlab.client import GitLabClient
from veranda_dagster.forges.gitlab.code_search import GitLabCodeSearch
from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.sim.gitlab_fake import GitLabFake
from veranda_dagster.sim.sample_org import (
    INVOICE_BUGGY_LINE,
    billing_files,
    create_bare_repo,
)

TOKEN = "glpat-fake-gitlab-token-01"
REFUND_PY = "import os\n\n\ndef refund(cents: int) -> int:\n    return -cents\n"
BILLING = "acme/platform/billing"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = Path(tmp_path_factory.mktemp("gitlab"))
    git, scratch = root / "git", root / "scratch"
    scratch.mkdir()
    create_bare_repo(git, BILLING, billing_files(), scratch)
    create_bare_repo(git, "acme/platform/ledger", {"README.md": "# l\n\nLedger\n"}, scratch)
    create_bare_repo(git, "acme/web/shop", {"README.md": "# s\n\nShop front\n"}, scratch)
    return git


@pytest.fixture(scope="module")
def fake(tree: Path):
    with GitLabFake(tree, token=TOKEN) as server:
        yield server


def client(fake: GitLabFake, token: str = TOKEN) -> GitLabClient:
    return GitLabClient(fake.base_url, token, sleep=lambda s: None)


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    argv = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "credential.helper=", *args]
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return proc.stdout.strip()


def test_projects_subgroups_renames_and_bad_credentials(fake: GitLabFake):
    gl = client(fake)
    assert gl.get_project(BILLING)["default_branch"] == "main"
    assert [p["path_with_namespace"] for p in gl.list_group_projects("acme")] == [
        "acme/platform/billing",
        "acme/platform/ledger",
        "acme/web/shop",
    ]
    assert len(gl.list_group_projects("acme/platform")) == 2
    fake.rename("acme/web/shop", "acme/web/storefront")
    assert gl.get_project("acme/web/shop")["path_with_namespace"] == "acme/web/storefront"
    assert gl.remote("acme/web/shop").url.endswith("/acme/web/storefront.git")
    assert gl.find_project("acme/nope") is None
    with pytest.raises(HttpAuthError):
        client(fake, "glpat-wrong").get_project(BILLING)


def test_push_merge_request_pipeline_code_quality_and_discussions(fake: GitLabFake, tmp_path):
    gl = client(fake)
    remote = gl.remote(BILLING)
    work = tmp_path / "clone"
    with git_askpass(TOKEN, "oauth2") as askpass:
        env = {**git_env(), **askpass}
        git("clone", "-q", remote.url, str(work), env=env)
        text = (work / "billing/invoice.py").read_text()
        (work / "billing/invoice.py").write_text("import os\n" + text)  # F401 for lint
        git("checkout", "-q", "-b", "veranda/pay-17", cwd=work)
        git("commit", "-qam", "Break lint", cwd=work)
        git("push", "-q", "origin", "veranda/pay-17", cwd=work, env=env)
    sha = git("rev-parse", "HEAD", cwd=work)
    assert TOKEN not in remote.url

    assert gl.find_pull_request(BILLING, "veranda/pay-17") is None
    iid, url = gl.create_pull_request(BILLING, "veranda/pay-17", "main", "Fix", "body")
    assert url.endswith(f"/{BILLING}/-/merge_requests/{iid}")
    assert gl.create_pull_request(BILLING, "veranda/pay-17", "main", "Fix", "again")[0] == iid
    assert len(fake.mrs[BILLING]) == 1
    gl.update_pull_request_body(BILLING, iid, "new body")
    pr = gl.find_pull_request(BILLING, "veranda/pay-17")
    assert pr is not None and pr.body == "new body" and pr.head_sha == sha

    by_name = {j.name: j for j in gl.list_ci_jobs(BILLING, sha)}
    assert by_name["lint"].failing
    found = from_findings(gl.ci_findings(BILLING, by_name["lint"]))
    assert ("F401", "billing/invoice.py", 1) in [(v.rule, v.path, v.line) for v in found]
    log = gl.ci_job_log_tail(BILLING, by_name["lint"])
    assert log and "F401" in log

    fake.add_diff_thread(BILLING, iid, "billing/invoice.py", 1, "Drop this import")
    fake.add_note(BILLING, iid, "Also add a test")
    humans = human_comments(gl, BILLING, iid)
    assert [(c.thread is not None, c.body) for c in humans] == [
        (True, "Drop this import"),  # in its diff discussion
        (False, "Also add a test"),  # in the conversation
    ]
    gl.reply(BILLING, iid, humans[0], "Done\n<!-- veranda -->")
    gl.comment(BILLING, iid, "Summary\n<!-- veranda -->")
    assert [c.body for c in human_comments(gl, BILLING, iid)] == [
        "Drop this import",
        "Also add a test",
    ]
    thread = [c for c in gl.list_comments(BILLING, iid) if c.thread == humans[0].thread]
    assert [c.body for c in thread] == ["Drop this import", "Done\n<!-- veranda -->"]
    assert thread[1].is_reply and thread[1].by_bot


def test_a_fork_merge_request_with_our_branch_name_is_not_adopted(fake: GitLabFake):
    """A fork's MR into billing from ``veranda/pay-99`` matches GitLab's ``source_branch``
    filter; the client does not take it for ours, so its description is never overwritten
    (the create that follows is refused by the fake only because the branch is not pushed)."""
    gl = client(fake)
    iid = fake.fork_merge_request(BILLING, "veranda/pay-99", "mine, not yours")
    assert gl.find_pull_request(BILLING, "veranda/pay-99") is None
    with pytest.raises(Exception, match="400"):
        gl.create_pull_request(BILLING, "veranda/pay-99", "main", "Fix", "ours")
    assert fake.mrs[BILLING][iid]["description"] == "mine, not yours"


def test_a_note_someone_else_edited_is_no_longer_ours(fake: GitLabFake):
    gl = client(fake)
    iid = fake.fork_merge_request(BILLING, "scratch/edit", "x")
    gl.comment(BILLING, iid, "Self-review: done.")
    fake.add_note(BILLING, iid, "Self-review: done.", username="project_1_bot_veranda_lookalike")
    (ours,) = [c for c in gl.list_comments(BILLING, iid) if c.by_self]
    fake.edit_note(BILLING, iid, int(ours.id.split(":")[1]), "forged progress")
    assert not any(c.by_self for c in gl.list_comments(BILLING, iid))


def test_blob_search_index_against_the_fake(fake: GitLabFake):
    search = GitLabCodeSearch(fake.base_url, TOKEN, BILLING, sleep=lambda s: None)
    needle = INVOICE_BUGGY_LINE.strip().split("(")[0]  # "subtotal = sum"
    hits = search.search(needle)
    assert hits and hits[0].path == "billing/invoice.py"
    lines = search.file_text("billing/invoice.py") or []
    assert needle in lines[hits[0].line - 1]
    window = search.read_window(hits[0].path, hits[0].line)
    assert needle in window.text
    assert len(search.sha) == 40
    fake.fail_next("/api/v4/projects/*/search", 429, retry_after=0)
    assert search.search(needle)  # the 429 waited Retry-After and was retried


def test_ci_repair_grounding_reads_code_quality_and_keeps_only_our_half(tmp_path: Path):
    """The domain's own grounding (``ci.collect_violations`` + ``filter_to_commit``) over the
    fake: main already carries one lint finding, the pushed commit adds another; the Code
    Quality report holds both and only the commit's one is ours to fix."""
    git_root, scratch = tmp_path / "git", tmp_path / "scratch"
    scratch.mkdir()
    files = {
        **billing_files(),
        "billing/legacy.py": "import sys\n\n\ndef old() -> int:\n    return 1\n",
    }
    create_bare_repo(git_root, BILLING, files, scratch)
    with GitLabFake(git_root, token=TOKEN) as server:
        gl = client(server)
        work = tmp_path / "clone"
        with git_askpass(TOKEN, "oauth2") as askpass:
            env = {**git_env(), **askpass}
            git("clone", "-q", gl.remote(BILLING).url, str(work), env=env)
            base = git("rev-parse", "HEAD", cwd=work)
            (work / "billing/refund.py").write_text(REFUND_PY)
            git("checkout", "-q", "-b", "veranda/pay-20", cwd=work)
            git("add", "billing/refund.py", cwd=work)
            git("commit", "-qm", "Add refunds", cwd=work)
            git("push", "-q", "origin", "veranda/pay-20", cwd=work, env=env)
        sha = git("rev-parse", "HEAD", cwd=work)
        failing = [j for j in gl.list_ci_jobs(BILLING, sha) if j.failing]
        assert [r.name for r in failing] == ["lint"]
        everything = collect_violations(gl, BILLING, failing, str(work))
        assert {(v.path, v.rule) for v in everything} == {
            ("billing/refund.py", "F401"),
            ("billing/legacy.py", "F401"),
        }
        changed = changed_lines(git("diff", base, "HEAD", cwd=work) + "\n")
        ours, theirs = filter_to_commit(everything, changed)
        assert [(v.path, v.line) for v in ours] == [("billing/refund.py", 1)]
        assert [v.path for v in theirs] == ["billing/legacy.py"]
