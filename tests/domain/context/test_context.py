"""``build_context_pack`` against a real local bare repository as the forge."""

import json
import shutil
import subprocess

import pytest

from tests.fixtures.context.gitrepo import commit, git, make_repo
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.layers import BEGIN
from veranda_dagster.domain.context.pack import ContextConfig, build_context_pack, build_local_pack
from veranda_dagster.domain.core.agent import AgentReply, AgentRequest
from veranda_dagster.domain.core.errors import AwaitingHumanError
from veranda_dagster.domain.core.models import ContextPack, RepoGuess, Ticket

OWN_CLAUDE = "# Our rules\nKeep it small.\n"
TICKET = Ticket(
    id="ENG-42",
    source="linear",
    title="LoginButton shows twice",
    description="`useSession` returns a stale value in src/auth/session.ts after `refreshToken`.",
)
GUESS = RepoGuess(
    ticket_id="ENG-42", repo="acme/web", confidence="high", signal="declaration", decision="proceed"
)


class FakeAgent:
    """Declares files and formats; must never be asked to run a turn during context building."""

    def run(self, request: AgentRequest) -> AgentReply:
        raise AssertionError("context_pack must not call the agent")

    def instruction_files(self) -> list[str]:
        return ["CLAUDE.md", "AGENTS.md"]

    def mcp_formats(self) -> list[str]:
        return ["mcp_json", "codex_toml", "gemini_settings"]


@pytest.fixture
def forge(tmp_path):
    src = make_repo(
        tmp_path / "src",
        {
            "CLAUDE.md": OWN_CLAUDE,
            "package.json": json.dumps(
                {"scripts": {"test": "vitest run"}, "dependencies": {"react": "19"}}
            ),
            "src/auth/session.ts": "export function useSession() {\n  return refreshToken();\n}\n",
            "src/auth/token.ts": "export function refreshToken() {\n  return 1;\n}\n",
            "src/LoginButton.tsx": "import { useSession } from './auth/session';\n",
        },
    )
    bare = tmp_path / "forge.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    return bare


def _workspace(tmp_path, forge):
    return Workspace(tmp_path / "work", "ENG-42", str(forge), "veranda/eng-42")


def _build(tmp_path, forge, **config):
    ws = _workspace(tmp_path, forge)
    return ws, build_context_pack(
        TICKET, GUESS, ws, LocalGitGrep(ws.path), FakeAgent(), ContextConfig(**config)
    )


def test_builds_the_pack_in_a_fresh_clone_of_the_forge(tmp_path, forge):
    ws, pack = _build(tmp_path, forge)
    base = git(forge, "rev-parse", "main")
    assert isinstance(pack, ContextPack)
    assert (pack.repo, pack.clone_url, pack.default_branch) == ("acme/web", str(forge), "main")
    assert (pack.base_sha, pack.branch) == (base, "veranda/eng-42")
    assert ws.current_branch() == "veranda/eng-42"
    assert pack.seeds[:1] == ["src/auth/session.ts"]
    assert {"useSession", "refreshToken"} <= set(pack.seeds)
    assert "LoginButton" not in pack.seeds  # it matches nothing in the tree: no slot wasted
    assert pack.files[0].path == "src/auth/session.ts"
    assert len(pack.seeds) < pack.searches <= 12 and 0 < pack.bytes <= 12_000
    assert [c.id for c in pack.citations] == [f"R{i}" for i in range(1, len(pack.citations) + 1)]
    assert {c.sha for c in pack.citations} == {base}
    assert [layer.name for layer in pack.layers] == [
        "generic",
        "org_runbooks",
        "repo_hints",
        "repo_facts",
    ]
    assert pack.facts.frontend and pack.facts.test == ["npm run test"]
    assert pack.instruction_files == ["CLAUDE.md", "AGENTS.md"]
    # the browser server travels with every turn (shown to the CLI for the turn only); no MCP
    # configuration of the product's is written into the clone, so none can reach the PR
    assert [s.name for s in pack.mcp_servers] == ["playwright"] and pack.mcp_files == []
    assert pack.calls == [] and pack.usd == 0.0
    claude = (ws.path / "CLAUDE.md").read_text()
    assert claude.startswith(OWN_CLAUDE) and BEGIN in claude and "NOT available" in claude
    for rel in (".mcp.json", ".codex", ".gemini", ".cursor", ".kimi-code", ".grok"):
        assert not (ws.path / rel).exists(), rel
    # nothing Veranda wrote can reach a commit of the work loop
    assert ws.commit_all("work") == base
    assert git(ws.path, "status", "--porcelain") == ""
    ContextPack.model_validate_json(pack.model_dump_json())


def test_a_resumed_run_cites_the_default_branch_not_the_work_branch(tmp_path, forge):
    ws, first = _build(tmp_path, forge)
    commit(ws.path, {"src/auth/session.ts": "// rewritten\n" * 40}, "red tests")
    ws.push()
    shutil.rmtree(ws.path)  # a new pod: the directory is gone
    ws, again = _build(tmp_path, forge)
    assert ws.head_sha() != again.base_sha
    assert again.base_sha == first.base_sha
    assert {c.sha for c in again.citations} == {first.base_sha}
    assert again.files == first.files


def test_no_mcp_configs_for_a_backend_repo(tmp_path):
    src = make_repo(tmp_path / "src", {"go.mod": "module x\n", "main.go": "func refreshToken()\n"})
    bare = tmp_path / "forge.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    ws, pack = _build(tmp_path, bare)
    assert not pack.facts.frontend and pack.mcp_servers == [] and pack.mcp_files == []
    assert not (ws.path / ".mcp.json").exists()


def test_an_unsettled_repository_builds_nothing(tmp_path, forge):
    ask = GUESS.model_copy(update={"decision": "ask", "confidence": "low"})
    ws = _workspace(tmp_path, forge)
    with pytest.raises(AwaitingHumanError, match="not settled"):
        build_context_pack(TICKET, ask, ws, LocalGitGrep(ws.path), FakeAgent(), ContextConfig())
    assert not ws.path.exists()


def test_build_local_pack_is_the_cli_shape(tmp_path, forge):
    repo = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(forge), str(repo)], check=True)
    out = build_local_pack(repo, TICKET, ["The `refreshToken` path in src/auth/token.ts too."])
    assert set(out) == {"seeds", "searches", "bytes", "files", "citations"}
    assert "src/auth/token.ts" in out["seeds"]
    assert set(out["files"][0]) == {"path", "windows"}
    assert set(out["files"][0]["windows"][0]) == {"start", "end", "text"}
    assert set(out["citations"][0]) == {"id", "path", "start", "end", "sha"}
    assert out["bytes"] == sum(len(w["text"].encode()) for f in out["files"] for w in f["windows"])
