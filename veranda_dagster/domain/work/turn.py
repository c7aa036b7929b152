"""What every work phase shares: a ready clone, the worktree's changes, one agent turn.

The clone is disposable (the forge holds the truth), so each phase starts by making sure it
exists on the ticket branch and that the instruction files the context phase wrote are still
there; a new pod whose directory was wiped gets them back from the stored ``ContextPack``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.context.layers import BEGIN, write_instruction_files
from veranda_dagster.domain.context.retrieval import RetrievalResult
from veranda_dagster.domain.core.agent import AgentPort, AgentReply, AgentRequest
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.mcp_config import McpServer
from veranda_dagster.domain.core.models import ContextPack, ModelCall, RepoFacts, Ticket, Tier
from veranda_dagster.domain.core.phases import PHASES
from veranda_dagster.domain.core.redaction import scrub

JUNK_PARTS = frozenset(
    {
        "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", "node_modules", ".tox",
        ".nox", ".venv", ".coverage", "coverage.out", ".nyc_output",
    }
)  # fmt: skip
"""Tool output a command leaves in the tree; never part of a commit the agent makes. Only names
that cannot be source (``build/`` or ``dist/`` can be) — the rest is the repo's .gitignore's job."""
JUNK_SUFFIXES = (".pyc", ".pyo", ".egg-info")

_TEST_NAME = re.compile(
    r"(^test_.*\.py$|.*_test\.py$|^conftest\.py$|.*_test\.go$|.*\.(test|spec)\.[cm]?[jt]sx?$"
    r"|.*Test\.(java|kt)$|.*_spec\.rb$)"
)
_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "testdata"})
PHASE_TRAILER = "Veranda-Phase"
_TRAILER_LINE = re.compile(rf"^{PHASE_TRAILER}:[ \t]*(\S+)[ \t]*$", re.M)


def phase_commits(log: str, phase: str) -> int:
    """How many commit messages in ``log`` carry ``phase``'s trailer: its registry name, or a
    name its commits carried before the names were unified (``Phase.old_trailers``), so a
    branch pushed before the rename still counts its own commits."""
    names = set(PHASES[phase].trailers)
    return sum(1 for m in _TRAILER_LINE.finditer(log) if m.group(1) in names)


EnvironmentPreparer = Callable[[str, Path, RepoFacts], object]
"""Runs a repository's setup step for a clone (``environment.setup.prepare_environment``).

Handed to the domain by ``plugins.load_plugins`` rather than imported: the setup step runs the
sandbox and the registry proxy, which sit outside the plain-Python domain."""

_environment_preparer: list[EnvironmentPreparer] = []


def register_environment_preparer(preparer: EnvironmentPreparer) -> None:
    """Install the process's environment preparer (idempotent: the last one registered wins)."""
    _environment_preparer[:] = [preparer]


def _prepare_environment(repo_name: str, repo: Path, facts: RepoFacts) -> None:
    if not _environment_preparer:
        raise ConfigError(
            "no environment preparer is registered: call veranda_dagster.plugins.load_plugins() "
            "before running a work phase"
        )
    _environment_preparer[0](repo_name, repo, facts)


def prepare(workspace: Workspace, pack: ContextPack) -> Path:
    """The clone on the ticket branch, with the pack's instruction files in place and the
    repository's environment prepared (its setup step: run once per lockfile hash, then found
    in the cache by every later phase and ticket; ``environment.setup``)."""
    repo = workspace.ensure()
    _prepare_environment(pack.repo, repo, pack.facts)
    files = RepoFiles(repo)
    missing = [rel for rel in pack.instruction_files if BEGIN not in (files.read_text(rel) or "")]
    if missing and pack.layers:
        retrieval = RetrievalResult(
            files=pack.files, citations=pack.citations, searches=pack.searches, bytes=pack.bytes
        )
        write_instruction_files(repo, pack.layers, retrieval, pack.instruction_files)
    return repo


def is_junk(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p in JUNK_PARTS for p in parts) or path.endswith(JUNK_SUFFIXES)


def is_test_path(path: str) -> bool:
    pure = PurePosixPath(path)
    return bool(_TEST_NAME.match(pure.name)) or any(p in _TEST_DIRS for p in pure.parts[:-1])


def worktree_changes(workspace: Workspace) -> list[str]:
    """Paths added, modified or deleted in the worktree (tool junk and ignored files left out)."""
    # v2: every record starts with its type, so no leading space is lost to output stripping
    out = workspace.git("status", "--porcelain=v2", "-z", "--untracked-files=all")
    fields = {"1": 8, "2": 9, "u": 10, "?": 1}
    paths: list[str] = []
    entries = iter(out.split("\0"))
    for entry in entries:
        kind = entry[:1]
        if kind not in fields:
            continue
        path = entry.split(" ", fields[kind])[-1]
        if kind == "2":
            next(entries, None)  # the rename's source path follows
        if not is_junk(path):
            paths.append(path)
    return sorted(dict.fromkeys(paths))


def revert(workspace: Workspace, paths: list[str]) -> None:
    """Put ``paths`` back as HEAD has them; files HEAD does not have are removed."""
    for path in paths:
        if workspace.file_at("HEAD", path) is not None:
            workspace.git("checkout", "HEAD", "--", path)
        else:
            target = workspace.path / path
            if target.is_file():
                target.unlink()


def commit_and_push(workspace: Workspace, paths: list[str], subject: str, phase: str) -> str:
    trailer = PHASES[phase].name  # a phase the registry does not know fails here, loudly
    sha = workspace.commit_all(f"{subject}\n\n{PHASE_TRAILER}: {trailer}", paths or None)
    workspace.push()
    return sha


def turn(
    agent: AgentPort,
    role: str,
    tier: Tier,
    prompt: str,
    repo: Path,
    ticket: Ticket,
    *,
    tools: list[McpServer],
) -> AgentReply:
    """One agent turn in the clone; the pinned model (if any) travels with every request, and
    so do the product's tool servers (``ContextPack.mcp_servers``), which the CLI is shown for
    the turn instead of any configuration in the clone."""
    return agent.run(
        AgentRequest(
            role=role,
            tier=tier,
            prompt=scrub(prompt),
            workdir=str(repo),
            pinned_model=ticket.pinned_model,
            mcp_servers=tools,
        )
    )


def calls_usd(calls: list[ModelCall]) -> float:
    return round(sum(c.usd for c in calls), 6)
