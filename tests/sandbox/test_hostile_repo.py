"""A hostile repository's files, links and git config as the product's own readers meet them.

Each test plants what issue 11 found (a hints file linked to ``/proc/self/environ``, an
instruction file linked out of the clone, a ``Makefile`` linked to ``/dev/zero``, a FIFO, a
planted hook and ``core.fsmonitor``, a rewritten push URL) in a real clone and drives the real
reader or the real git call, asserting on what the product read, wrote and sent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from veranda_dagster.domain.clone.git_command import git_argv, git_askpass, git_env
from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.clone.workspace import SecretInChangeError, Workspace
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.context.layers import (
    HINTS_IN_REPO,
    build_layers,
    write_instruction_files,
)
from veranda_dagster.domain.context.retrieval import RetrievalResult
from veranda_dagster.domain.core.bounds import MAX_REPO_FILE_BYTES
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import RepoFacts, Ticket
from veranda_dagster.sim.git_http import GitHttpServer

SECRET = "ghs_HOSTILE_repo_canary_9b2e41"
USERNAME = "x-access-token"
"""What GitHub's forge row sends beside the token."""


@pytest.fixture(autouse=True)
def _secret_in_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET, USERNAME)


def _git(repo: Path, *args: str) -> str:
    who = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env = {**git_env(), **who, "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    repo = tmp_path / "ws" / "ENG-1"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("def handler():\n    return 1\n")
    return repo


# --- reading files ---------------------------------------------------------------------------


def test_links_out_devices_fifos_and_oversize_files_are_refused_not_read(
    clone: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(f"TOKEN={SECRET}\n")
    (clone / "environ").symlink_to("/proc/self/environ")
    (clone / "out.txt").symlink_to(outside)
    (clone / "zero").symlink_to("/dev/zero")
    os.mkfifo(clone / "pipe")
    (clone / "big.txt").write_bytes(b"x" * (MAX_REPO_FILE_BYTES + 1))
    (clone / "fits.txt").write_bytes(b"x" * MAX_REPO_FILE_BYTES)
    (clone / "alias.py").symlink_to("app.py")  # a link that stays inside is an ordinary file

    files = RepoFiles(clone)
    for name in ("environ", "out.txt", "zero", "pipe", "big.txt"):
        assert files.read_text(name) is None, name
    assert files.read_text("fits.txt") == "x" * MAX_REPO_FILE_BYTES
    assert files.read_text("alias.py") == "def handler():\n    return 1\n"
    reasons = "\n".join(files.refused)
    assert "environ: a link that leaves the clone" in reasons
    assert "out.txt: a link that leaves the clone" in reasons
    assert "zero: a link that leaves the clone" in reasons
    assert "pipe: not a regular file" in reasons
    assert f"big.txt: larger than {MAX_REPO_FILE_BYTES} bytes" in reasons
    assert SECRET not in reasons


def test_a_device_inside_the_clone_is_not_read_either(clone: Path) -> None:
    """A character device node cannot be made without privilege, but a bind of one could sit
    there; the O_NONBLOCK open and the regular-file check refuse it without reading."""
    files = RepoFiles("/dev")
    assert files.read_text("zero") is None
    assert files.refused == ["zero: not a regular file"]


def test_the_facts_reader_survives_a_makefile_linked_to_dev_zero(clone: Path) -> None:
    (clone / "Makefile").symlink_to("/dev/zero")
    (clone / "pyproject.toml").symlink_to("/dev/urandom")
    facts = read_repo_facts(clone)
    assert "Makefile: a link that leaves the clone" in facts.refused_files
    assert "pyproject.toml: a link that leaves the clone" in facts.refused_files


def test_hints_linked_to_proc_environ_put_no_secret_in_any_layer(clone: Path) -> None:
    (clone / ".veranda").mkdir()
    (clone / HINTS_IN_REPO).symlink_to("/proc/self/environ")
    files = RepoFiles(clone)
    ticket = Ticket(id="ENG-1", source="linear", title="Fix handler", description="boom")
    layers = build_layers(
        ticket,
        clone,
        RepoFacts(),
        runbooks_dir=None,
        hints_dir=None,
        pack=RetrievalResult(),
        repo="acme/app",
        files=files,
    )
    text = "\n".join(layer.text for layer in layers)
    assert SECRET not in text
    assert next(la for la in layers if la.name == "repo_hints").source == "none"
    assert f"{HINTS_IN_REPO}: a link that leaves the clone" in files.refused


def test_an_instruction_file_linked_out_of_the_clone_is_never_written(
    clone: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "victim.md"
    outside.write_text("the operator's own file\n")
    (clone / "CLAUDE.md").symlink_to(outside)
    (clone / "docs").mkdir()
    (clone / "docs" / "agents.md").write_text("house rules\n")
    (clone / "AGENTS.md").symlink_to("docs/agents.md")
    files = RepoFiles(clone)
    written = write_instruction_files(
        clone, [], RetrievalResult(), ["CLAUDE.md", "AGENTS.md"], files=files
    )
    assert outside.read_text() == "the operator's own file\n"
    assert written == ["docs/agents.md"]  # an in-clone link is written at its target
    assert "house rules" in (clone / "docs" / "agents.md").read_text()
    assert "CLAUDE.md: a link that leaves the clone" in files.refused


def test_a_folder_linked_out_of_the_clone_is_not_written_through(
    clone: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (clone / ".gemini").symlink_to(elsewhere)
    files = RepoFiles(clone)
    assert files.write_text(".gemini/GEMINI.md", "block") is None
    assert list(elsewhere.iterdir()) == []


def test_code_search_never_returns_a_symlinks_target(clone: Path, tmp_path: Path) -> None:
    outside = tmp_path / "host_secret.py"
    outside.write_text(f"handler_token = '{SECRET}'\n")
    (clone / "linked.py").symlink_to(outside)
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "base")
    grep = LocalGitGrep(clone)
    assert "linked.py" not in grep.paths()
    assert all(hit.path != "linked.py" for hit in grep.search("handler"))
    assert grep.file_text("linked.py") is None
    assert [hit.path for hit in grep.search("def handler")] == ["app.py"]


# --- git -------------------------------------------------------------------------------------


def _bare_with_main(root: Path) -> Path:
    seed = root / "seed"
    seed.mkdir(parents=True)
    _git(seed, "init", "-q", "-b", "main")
    (seed / "app.py").write_text("x = 1\n")
    _git(seed, "add", "-A")
    _git(seed, "commit", "-qm", "base")
    bare = root / "srv" / "acme" / "app.git"
    bare.parent.mkdir(parents=True)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(seed), str(bare)], env=git_env(), check=True
    )
    return bare


@pytest.fixture
def git_spy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``git`` first on PATH that appends its argv and environment to a log, then runs the
    real git: every git process the product starts is recorded, with what /proc would show."""
    bin_dir = tmp_path / "spy-bin"
    bin_dir.mkdir()
    log = tmp_path / "git-spy.log"
    real = shutil.which("git")
    spy = bin_dir / "git"
    spy.write_text(f'#!/bin/sh\n{{ echo "ARGV $*"; env; }} >> {log}\nexec {real} "$@"\n')
    spy.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return log


def test_push_sends_the_token_only_through_askpass_and_runs_no_planted_hook(
    tmp_path: Path, git_spy: Path
) -> None:
    """A real clone and push over HTTP with Basic auth: the server saw the token, no process's
    argv or environment held it, and a planted pre-commit/pre-push hook and fsmonitor never
    ran (they would have written their environment to ``ran-*``)."""
    bare = _bare_with_main(tmp_path)
    with GitHttpServer(bare.parent.parent, SECRET) as server:
        url = server.url_for("acme/app")
        ws = Workspace(tmp_path / "ws", "ENG-7", url, "veranda/eng-7", SECRET, USERNAME)
        ws.ensure()
        hooks = ws.path / ".git" / "hooks"
        for hook in ("pre-commit", "pre-push", "post-commit", "reference-transaction"):
            (hooks / hook).write_text(f"#!/bin/sh\nenv > {tmp_path}/ran-{hook}\n")
            (hooks / hook).chmod(0o755)
        monitor = tmp_path / "fsmonitor.sh"
        monitor.write_text(f"#!/bin/sh\nenv > {tmp_path}/ran-fsmonitor\n")
        monitor.chmod(0o755)
        _git(ws.path, "config", "core.fsmonitor", str(monitor))
        _git(ws.path, "config", "core.hooksPath", str(hooks))
        (ws.path / "app.py").write_text("x = 2\n")
        ws.commit_all("fix: x")
        ws.push()
        assert server.auth_seen > 0 and server.rejected > 0  # challenged, then answered
    spied = git_spy.read_text()
    argvs = [line for line in spied.splitlines() if line.startswith("ARGV ")]
    assert any(" push --quiet --force-with-lease origin " in a for a in argvs), argvs
    assert SECRET not in spied, "the token was in a git process's argv or environment"
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == []
    assert SECRET not in (ws.path / ".git" / "config").read_text()
    log = subprocess.run(
        ["git", "--git-dir", str(bare), "log", "--format=%s", "veranda/eng-7"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert log.splitlines()[0] == "fix: x"


def test_a_rewritten_origin_or_push_url_is_reset_before_the_token_goes_anywhere(
    tmp_path: Path,
) -> None:
    bare = _bare_with_main(tmp_path)
    decoy_root = tmp_path / "decoy"
    decoy = _bare_with_main(decoy_root)
    with (
        GitHttpServer(bare.parent.parent, SECRET) as server,
        GitHttpServer(decoy.parent.parent, "not-the-token") as attacker,
    ):
        url = server.url_for("acme/app")
        ws = Workspace(tmp_path / "ws", "ENG-8", url, "veranda/eng-8", SECRET, USERNAME)
        ws.ensure()
        _git(ws.path, "remote", "set-url", "--push", "origin", attacker.url_for("acme/app"))
        (ws.path / "app.py").write_text("x = 3\n")
        ws.commit_all("fix: three")
        ws.push()
        _git(ws.path, "remote", "set-url", "origin", attacker.url_for("acme/app"))
        ws.push()
        assert attacker.auth_seen == 0 and attacker.rejected == 0
    assert _git(ws.path, "config", "--get-all", "remote.origin.url").split() == [
        server.url_for("acme/app")
    ]


def test_no_token_is_offered_to_a_plain_http_remote_that_is_not_loopback(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, "ENG-9", "http://forge.example/acme/app.git", "b", SECRET, USERNAME)
    with pytest.raises(Exception) as caught:
        ws.git("ls-remote", "origin", cwd=tmp_path, timeout=20)
    assert SECRET not in str(caught.value)


def test_a_token_without_the_forges_username_is_refused_before_any_git_runs(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="git username"):
        Workspace(tmp_path, "ENG-9", "https://forge.example/acme/app.git", "b", SECRET)
    assert not (tmp_path / "ENG-9").exists()
    assert (
        Workspace(tmp_path, "ENG-9", "https://forge.example/acme/app.git", "b").git_username == ""
    )


def test_the_git_command_line_and_env_never_carry_the_token() -> None:
    argv = git_argv("push", "origin", "HEAD")
    assert "core.hooksPath=/dev/null" in argv and "core.fsmonitor=false" in argv
    assert not any(SECRET in part for part in argv)
    assert SECRET not in "".join(git_env().values())
    with git_askpass(SECRET, USERNAME) as extra:
        assert SECRET not in "".join(extra.values())
        script = Path(extra["GIT_ASKPASS"])
        token_files = [p for p in script.parent.iterdir() if p != script]
        assert [oct(p.stat().st_mode & 0o777) for p in token_files] == ["0o600"]
        assert oct(script.parent.stat().st_mode & 0o777) == "0o700"
    assert not script.parent.exists()


def _branch_on_server(bare: Path, branch: str) -> bool:
    out = subprocess.run(
        ["git", "--git-dir", str(bare), "branch", "--list", branch],
        env=git_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return bool(out.strip())


def test_a_change_that_adds_a_worker_secret_is_never_pushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Push protection: an agent steered into writing its environment into a file (or a commit
    message) gets a typed refusal naming the variable and file, and the forge gets nothing."""
    linear_key = "lin_api_HOSTILE_ticket_canary_77c1"
    monkeypatch.setenv("LINEAR_API_KEY", linear_key)
    bare = _bare_with_main(tmp_path)
    with GitHttpServer(bare.parent.parent, SECRET) as server:
        url = server.url_for("acme/app")
        ws = Workspace(tmp_path / "ws", "ENG-10", url, "veranda/eng-10", SECRET, USERNAME)
        ws.ensure()
        (ws.path / "notes").mkdir()
        (ws.path / "notes" / "leak.txt").write_text(f"LINEAR_API_KEY={linear_key}\n")
        ws.commit_all("docs: notes")
        with pytest.raises(SecretInChangeError) as caught:
            ws.push()
        assert str(caught.value) == (
            "refusing to push veranda/eng-10: notes/leak.txt adds the value of $LINEAR_API_KEY"
        )
        assert not _branch_on_server(bare, "veranda/eng-10")

        (ws.path / "notes" / "leak.txt").unlink()
        ws.commit_all(f"chore: token {SECRET}")
        with pytest.raises(SecretInChangeError, match="a commit message holds the value of"):
            ws.push()
        assert SECRET not in str(caught.value)

        ws.git("reset", "--hard", "--quiet", "origin/main")
        (ws.path / "app.py").write_text("x = 4\n")
        ws.commit_all("fix: four")
        ws.push()  # a clean change still goes out
    assert _branch_on_server(bare, "veranda/eng-10")
