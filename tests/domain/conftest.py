"""Fixtures for the work phases: a real project pushed to a local bare repo (the forge's git
side), a Workspace cloned from it, a scripted agent that edits files per role, and an in-memory
forge."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.context.gitrepo import git, make_repo
from tests.fixtures.work.project import BASE_FILES, SLUGIFY_OK
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.core.agent import AgentReply, AgentRequest
from veranda_dagster.domain.core.forge_port import CiFinding, CiJob, Comment, ForgePR
from veranda_dagster.domain.core.models import (
    Citation,
    ContextPack,
    ModelCall,
    PackFile,
    PullRequest,
    Ticket,
    Usage,
    Window,
)
from veranda_dagster.domain.work.turn import commit_and_push
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.sim.github_fake import GitHubFake

TICKET = Ticket(
    id="ENG-7",
    source="linear",
    title="Add slugify to app/text.py",
    description="Add a `slugify(text)` helper to app/text.py: lowercase, words joined by '-'.",
    url="https://linear.app/acme/issue/ENG-7",
)
BRANCH = "veranda/eng-7"

Action = Callable[[AgentRequest, Path], str]


def write(rel: str, text: str, append: bool = False) -> Action:
    """An agent action that writes (or appends to) a file in the clone."""

    def act(request: AgentRequest, repo: Path) -> str:
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        old = target.read_text() if append and target.exists() else ""
        target.write_text(old + text)
        return f"wrote {rel}"

    return act


def reply(text: str, *edits: Action) -> Action:
    def act(request: AgentRequest, repo: Path) -> str:
        for edit in edits:
            edit(request, repo)
        return text

    return act


@dataclass
class ScriptedAgent:
    """AgentPort driven by a script: per role, a queue of actions run in the request's workdir.
    Every request is recorded, so a test asserts on exactly what each seat was told."""

    script: dict[str, list[Action]] = field(default_factory=dict)
    default: dict[str, Action] = field(default_factory=dict)
    requests: list[AgentRequest] = field(default_factory=list)
    reason: str = "preferred"
    dropped_pin: str | None = None

    def run(self, request: AgentRequest) -> AgentReply:
        self.requests.append(request)
        queue = self.script.get(request.role, [])
        if queue:
            action = queue.pop(0)
        elif request.role in self.default:
            action = self.default[request.role]
        else:
            raise AssertionError(f"unscripted agent turn for role {request.role!r}")
        text = action(request, Path(request.workdir))
        call = ModelCall(
            role=request.role,
            vendor="claude",
            mode="cli",
            tier=request.tier,
            model=f"fake-{request.tier}",
            reason=self.reason,
            dropped_pin=self.dropped_pin,
            usage=Usage(input=100, output=20),
            usd=0.01,
        )
        return AgentReply(text=text, call=call)

    def roles(self) -> list[str]:
        return [r.role for r in self.requests]

    def instruction_files(self) -> list[str]:
        return ["CLAUDE.md"]

    def mcp_formats(self) -> list[str]:
        return []


@dataclass
class FakeForge:
    """The forge in memory: PRs, scripted CI jobs per sha with their findings, reports and
    logs, and one list of comments (review threads and conversation) in one id space."""

    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    jobs: Callable[[str, int], list[CiJob]] = lambda sha, n: []
    findings: dict[str, list[CiFinding]] = field(default_factory=dict)
    reports: dict[str, str] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    comments: list[Comment] = field(default_factory=list)
    posted: list[tuple[int, str]] = field(default_factory=list)
    """``(PR number, body)`` of each new comment in the conversation."""
    replies: list[tuple[str, str]] = field(default_factory=list)
    """``(id of the comment answered, body)`` of each reply in a review thread."""
    job_polls: list[str] = field(default_factory=list)
    created: int = 0

    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None:
        for number, pr in self.pulls.items():
            if pr["head"] == head_branch:
                return ForgePR(number, pr["url"], head_branch, body=pr["body"])
        return None

    def create_pull_request(self, repo, head, base, title, body):
        self.created += 1
        number = 100 + len(self.pulls)
        url = f"https://github.com/{repo}/pull/{number}"
        self.pulls[number] = {"head": head, "base": base, "title": title, "body": body, "url": url}
        return number, url

    def update_pull_request_body(self, repo, number, body):
        self.pulls[number]["body"] = body

    def list_ci_jobs(self, repo, sha):
        self.job_polls.append(sha)
        return self.jobs(sha, self.job_polls.count(sha))

    def ci_findings(self, repo, job):
        return self.findings.get(job.id, [])

    def ci_job_report(self, repo, job):
        return self.reports.get(job.id, "")

    def ci_job_log_tail(self, repo, job):
        return self.logs.get(job.id)

    def list_comments(self, repo, number):
        return list(self.comments)

    def comment(self, repo, number, body):
        self.posted.append((number, body))
        posted = Comment(f"c{9000 + len(self.posted)}", "veranda", body, by_self=True)
        self.comments.append(posted)
        return posted.id

    def reply(self, repo, number, to, body):
        if to.thread is None:
            return self.comment(repo, number, body)
        self.replies.append((to.id, body))
        answer = Comment(
            f"c{8000 + len(self.replies)}", "veranda", body, to.thread, True, by_self=True
        )
        self.comments.append(answer)
        return answer.id


@dataclass
class Project:
    src: Path
    forge_git: Path
    workspace: Workspace
    pack: ContextPack

    @property
    def repo(self) -> Path:
        return self.workspace.path

    def remote_sha(self) -> str:
        return git(self.forge_git, "rev-parse", BRANCH)

    def show(self, rev: str, path: str) -> str:
        return git(self.forge_git, "show", f"{rev}:{path}")


def build_project(tmp_path: Path, files: dict[str, str] | None = None) -> Project:
    src = make_repo(tmp_path / "src", {**BASE_FILES, **(files or {})})
    bare = tmp_path / "forge.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    base = git(src, "rev-parse", "HEAD")
    ws = Workspace(tmp_path / "work", TICKET.id, str(bare), BRANCH)
    window = Window(start=4, end=5, text="def shout(s):\n    return s.upper()\n")
    pack = ContextPack(
        ticket_id=TICKET.id,
        repo="acme/app",
        clone_url=str(bare),
        default_branch="main",
        base_sha=base,
        branch=BRANCH,
        files=[PackFile(path="app/text.py", windows=[window])],
        citations=[Citation(id="R1", path="app/text.py", start=4, end=5, sha=base)],
        facts=read_repo_facts(src),
    )
    return Project(src, bare, ws, pack)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return build_project(tmp_path)


@pytest.fixture(autouse=True)
def _fast_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's pytest runs without this environment's many plugins (seconds each)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


GH_REPO = "acme/app"
GH_TOKEN = "ghs_work_phases_through_the_fake_01"


@pytest.fixture
def github(project, tmp_path: Path) -> Iterator[tuple[GitHubFake, GitHubClient, PullRequest]]:
    """The project's bare repository served by the GitHub fake as ``acme/app``, its branch
    pushed and a PR opened by the bot through the real client."""
    root = tmp_path / "gh"
    (root / "acme").mkdir(parents=True)
    (root / "acme" / "app.git").symlink_to(project.forge_git)
    ws = project.workspace
    ws.ensure()
    (ws.path / "app/text.py").write_text(BASE_FILES["app/text.py"] + SLUGIFY_OK)
    sha = commit_and_push(ws, ["app/text.py"], "feat", "patch")
    with GitHubFake(root, token=GH_TOKEN, ci_mode="run") as fake:
        client = GitHubClient(fake.base_url, GH_TOKEN, sleep=lambda s: None)
        number, url = client.create_pull_request(GH_REPO, BRANCH, "main", "t", "b")
        pr = PullRequest(
            ticket_id=TICKET.id, number=number, url=url, title="t", body="b", branch=BRANCH,
            head_sha=sha,
        )  # fmt: skip
        try:
            yield fake, client, pr
        finally:
            client.close()
