"""The product's own git on a work tree that sandboxed code wrote (issue 30).

Sandboxed code can write the whole clone; the product's own sandboxed git can write ``.git``
too, so a planted filter may already have rewritten ``.git/config``. Each test plants one of
git's ways to run a command (a clean/smudge/process filter, a diff driver, a textconv,
``core.pager``/``editor``/``sshCommand``/``askPass``/``alternateRefsCommand``, ``include.path``,
``includeIf``, submodule recursion, a nested repository, a ``.git`` that is a link or a file)
exactly as such code could, then drives the real product operations (``Workspace.commit_all``,
``diff``, ``worktree_changes``, ``revert``, ``push`` to a real loopback git server that checks
the token, ``ensure``) and asserts on what the planted command recorded: it never ran, or ran
only inside the sandbox (uid 65534, its own pid namespace) where neither the worker's secret,
nor the token file, nor a canary file outside the clone was there to read. A benign change
still reaches the server; a nested repository or a gitlink is refused by name.

The sandbox is required (``VERANDA_SANDBOX=bwrap``): where bubblewrap cannot start these fail.
"""

from __future__ import annotations

import base64
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from veranda_dagster.domain.clone import git_transport, nested_repos
from veranda_dagster.domain.clone.git_command import GitError, git_env
from veranda_dagster.domain.clone.git_transport import GitDirError
from veranda_dagster.domain.clone.nested_repos import NestedRepositoryError
from veranda_dagster.domain.clone.workspace import SecretInChangeError, Workspace
from veranda_dagster.domain.work.turn import revert, worktree_changes
from veranda_dagster.sim.git_http import GitHttpServer

SECRET = "ghs_HOSTILE_git_canary_5d0c17aa"
CANARY = "CANARY-file-contents-0b9e3f"
USERNAME = "x-access-token"
BRANCH = "veranda/eng-30"
RECORDS = ".hostile/records"
SANDBOX_UID = "65534"


@pytest.fixture(autouse=True)
def _sandbox_and_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)


def _git(repo: Path, *args: str) -> str:
    who = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env = {**git_env(), **who, "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    ).stdout


def _seed_remote(root: Path, files: dict[str, str]) -> Path:
    seed = root / "seed"
    seed.mkdir(parents=True)
    _git(seed, "init", "-q", "-b", "main")
    for rel, text in files.items():
        (seed / rel).parent.mkdir(parents=True, exist_ok=True)
        (seed / rel).write_text(text)
    _git(seed, "add", "-A")
    _git(seed, "commit", "-qm", "base")
    bare = root / "srv" / "acme" / "app.git"
    bare.parent.mkdir(parents=True)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(seed), str(bare)], env=git_env(), check=True
    )
    return bare


BASE_FILES = {
    "app.py": "x = 1\n",
    "data.txt": "payload\n",
    ".gitignore": ".hostile/\n",
}


@dataclass
class Hostile:
    """One ticket's clone, its forge, and the spy a hostile tree points git at."""

    ws: Workspace
    server: GitHttpServer
    bare: Path
    canary: Path

    @property
    def clone(self) -> Path:
        return self.ws.path

    def spy(self, vector: str) -> str:
        """A shell command recording, into the clone, what it could see: its
        ``/proc/self/status``, its environment, its parent's environment, the canary file and
        the token file. Filters get their input passed through, so the change is unaltered."""
        script = self.clone / ".hostile" / "spy.sh"
        if not script.exists():
            script.parent.mkdir(exist_ok=True)
            script.write_text(
                f"""#!/bin/sh
d={self.clone}/{RECORDS}
mkdir -p "$d"
f="$d/$1-$$"
{{
  echo "== status"; cat /proc/self/status
  echo "== env"; env
  echo "== parent environ"; tr '\\0' '\\n' < /proc/$PPID/environ
  echo "== canary"; cat {self.canary}
  echo "== token file"; cat "$VERANDA_GIT_TOKEN_FILE"
}} > "$f" 2>&1
case "$1" in
  clean|smudge|textconv) cat "${{2:-/dev/stdin}}" ;;
esac
exit 0
"""
            )
            script.chmod(0o755)
        return f"sh {script} {vector}"

    def records(self) -> dict[str, str]:
        folder = self.clone / RECORDS
        if not folder.is_dir():
            return {}
        return {p.name: p.read_text(errors="replace") for p in sorted(folder.iterdir())}

    def config(self, *pairs: str) -> None:
        """Write the clone's ``.git/config`` as a filter inside the sandbox could."""
        for pair in pairs:
            key, _, value = pair.partition("=")
            _git(self.clone, "config", "--add", key, value)

    def on_server(self, branch: str = BRANCH) -> str:
        proc = subprocess.run(
            ["git", "--git-dir", str(self.bare), "show", f"{branch}:app.py"],
            env=git_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.stdout if proc.returncode == 0 else ""


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Hostile]:
    canary = tmp_path / "canary.txt"
    canary.write_text(CANARY + "\n")
    bare = _seed_remote(tmp_path, BASE_FILES)
    with GitHttpServer(bare.parent.parent, SECRET) as server:
        ws = Workspace(
            tmp_path / "ws", "ENG-30", server.url_for("acme/app"), BRANCH, SECRET, USERNAME
        )
        ws.ensure()
        yield Hostile(ws, server, bare, canary)


def assert_contained(records: dict[str, str]) -> None:
    """Every record was written inside the sandbox and saw nothing of the worker's."""
    for name, text in records.items():
        status = text.split("== env", 1)[0]
        uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
        assert uid_line.split()[1] == SANDBOX_UID, f"{name} ran outside the sandbox:\n{status}"
        nspid = next(line for line in status.splitlines() if line.startswith("NSpid:"))
        assert len(nspid.split()) == 2, f"{name} ran in the host's pid namespace: {nspid}"
        assert SECRET not in text, f"{name} saw the worker's secret"
        assert CANARY not in text, f"{name} read the canary file outside the clone"
        assert "VERANDA_GIT_TOKEN_FILE" not in text and "GIT_ASKPASS" not in text, name


def _product_cycle(h: Hostile) -> None:
    """What the work phases do with a change: look at it, commit it, diff it, revert a file,
    push, and start the next phase on the same clone."""
    (h.clone / "app.py").write_text("x = 2\n")
    (h.clone / "data.txt").write_text("payload 2\n")
    assert "app.py" in worktree_changes(h.ws)
    h.ws.commit_all("fix: x")
    h.ws.diff(h.ws.base_sha())
    h.ws.changed_files(h.ws.base_sha())
    (h.clone / "data.txt").write_text("scratch\n")
    revert(h.ws, ["data.txt"])
    h.ws.push()
    assert h.on_server() == "x = 2\n"
    h.ws.ensure()  # the next phase


VECTORS: dict[str, tuple[tuple[str, ...], str]] = {
    # name: (.git/config entries, with {spy:<vector>} placeholders; .gitattributes)
    "clean filter": (("filter.spy.clean={spy:clean}",), "* filter=spy\n"),
    "smudge filter": (("filter.spy.smudge={spy:smudge}",), "* filter=spy\n"),
    "process filter": (("filter.spy.process={spy:process}",), "* filter=spy\n"),
    "diff driver": (("diff.spy.command={spy:diff}",), "* diff=spy\n"),
    "textconv": (("diff.spy.textconv={spy:textconv}",), "* diff=spy\n"),
    "core commands": (
        (
            "core.pager={spy:pager}",
            "core.editor={spy:editor}",
            "core.sshCommand={spy:ssh}",
            "core.askPass={spy:askpass}",
            "core.alternateRefsCommand={spy:alternates}",
            "core.fsmonitor={spy:fsmonitor}",
            "sequence.editor={spy:seqeditor}",
            "credential.helper=!{spy:credential}",
            "uploadpack.packObjectsHook={spy:packhook}",
        ),
        "",
    ),
}


def _plant(h: Hostile, entries: tuple[str, ...], attributes: str) -> None:
    for entry in entries:
        key, _, value = entry.partition("=")
        if value.startswith("!{spy:"):
            value = "!" + h.spy(value[6:-1])
        elif value.startswith("{spy:"):
            value = h.spy(value[5:-1])
        h.config(f"{key}={value}")
    if attributes:
        (h.clone / ".gitattributes").write_text(attributes)


@pytest.mark.parametrize("vector", list(VECTORS))
def test_a_command_planted_in_git_config_runs_only_inside_the_sandbox(
    hostile: Hostile, vector: str
) -> None:
    entries, attributes = VECTORS[vector]
    _plant(hostile, entries, attributes)
    if vector == "process filter":
        # a filter that does not speak git's filter protocol makes git fail (inside the
        # sandbox too): a hostile tree can stop its own run, never reach a secret
        with pytest.raises(GitError, match="hung up"):
            _product_cycle(hostile)
    else:
        _product_cycle(hostile)
    records = hostile.records()
    assert_contained(records)
    if vector in ("clean filter", "smudge filter", "process filter", "textconv"):
        # git did run these (in the sandbox): the test saw the vector work
        assert records, f"the {vector} never ran; the test proves nothing"


def test_include_path_and_include_if_are_read_only_inside_the_sandbox(hostile: Hostile) -> None:
    """An included file the work tree holds, naming a filter, a push URL to another host and
    an ssh command: the filter runs sandboxed, and the push goes to the configured forge."""
    included = hostile.clone / ".hostile" / "evil.config"
    hostile.spy("clean")
    included.write_text(
        f'[filter "spy"]\n\tclean = {hostile.spy("clean")}\n'
        f"[core]\n\tsshCommand = {hostile.spy('ssh')}\n"
        '[remote "origin"]\n\tpushurl = http://127.0.0.1:9/elsewhere.git\n'
    )
    hostile.config(f"include.path={included}", f"includeIf.gitdir:/.path={included}")
    (hostile.clone / ".gitattributes").write_text("*.py filter=spy\n")
    _product_cycle(hostile)
    records = hostile.records()
    assert records and all(name.startswith("clean-") for name in records)
    assert_contained(records)
    config = (hostile.clone / ".git" / "config").read_text()
    assert "include" not in config and "pushurl" not in config and "filter" not in config


def test_a_hostile_repository_is_cloned_without_an_unsandboxed_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository's own ``.gitattributes`` routes every file through a filter the worker's
    user config defines (as git-lfs installs one): a clone's checkout ran it as the worker.
    Now the clone transfers objects only, and the checkout runs in the sandbox with no user
    config, so the filter never runs at all."""
    record = tmp_path / "smudge-ran"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[filter \"lfs\"]\n\tsmudge = sh -c 'env > {record}; cat'\n")
    monkeypatch.setenv("HOME", str(home))
    bare = _seed_remote(tmp_path, {**BASE_FILES, ".gitattributes": "* filter=lfs\n"})
    with GitHttpServer(bare.parent.parent, SECRET) as server:
        ws = Workspace(
            tmp_path / "ws", "ENG-31", server.url_for("acme/app"), BRANCH, SECRET, USERNAME
        )
        ws.ensure()
        assert (ws.path / "app.py").read_text() == "x = 1\n"
    assert not record.exists()


def test_a_nested_repository_is_refused_by_name_before_anything_is_staged(
    hostile: Hostile,
) -> None:
    """The issue's own attack: a nested repository whose config routes its files through a
    clean filter. It is refused before ``git add``, so nothing runs and nothing is staged."""
    nested = hostile.clone / "vendor" / "lib"
    nested.mkdir(parents=True)
    _git(nested, "init", "-q")
    (nested / "x.py").write_text("y = 1\n")
    _git(nested, "add", "-A")
    _git(nested, "commit", "-qm", "n")
    _git(nested, "config", "filter.spy.clean", hostile.spy("clean"))
    (nested / ".gitattributes").write_text("* filter=spy\n")
    (nested / "x.py").write_text("y = 2\n")
    (hostile.clone / "app.py").write_text("x = 2\n")
    with pytest.raises(NestedRepositoryError, match="vendor/lib is a nested git repository"):
        hostile.ws.commit_all("fix: x")
    assert hostile.records() == {}
    assert "vendor/lib" not in hostile.ws.git("ls-files", "--stage")
    # an ignored nested repository is left alone, as git add leaves it
    (hostile.clone / ".gitignore").write_text(".hostile/\nvendor/\n")
    hostile.ws.commit_all("fix: x")
    hostile.ws.push()
    assert hostile.on_server() == "x = 2\n"
    assert_contained(hostile.records())


def test_a_gitfile_nested_repository_is_refused_too(hostile: Hostile, tmp_path: Path) -> None:
    (hostile.clone / "pkg").mkdir()
    (hostile.clone / "pkg" / ".git").write_text("gitdir: ../.hostile/pkg-git\n")
    with pytest.raises(NestedRepositoryError, match="pkg is a nested git repository"):
        hostile.ws.commit_all("fix")


def test_a_submodule_with_recursion_is_neither_fetched_nor_pushed(
    hostile: Hostile, tmp_path: Path
) -> None:
    """A gitlink staged behind the product's back (sandboxed git can write the index) with a
    ``.gitmodules`` to a local repository and recursion switched on in ``.git/config``: no
    fetch follows it, and neither commit nor push lets it through."""
    evil = tmp_path / "evil"
    evil.mkdir()
    _git(evil, "init", "-q", "-b", "main")
    (evil / ".gitattributes").write_text("* filter=spy\n")
    (evil / "f").write_text("f\n")
    _git(evil, "add", "-A")
    _git(evil, "commit", "-qm", "e")
    sha = _git(evil, "rev-parse", "HEAD").strip()
    (hostile.clone / ".gitmodules").write_text(f'[submodule "sub"]\n\tpath = sub\n\turl = {evil}\n')
    hostile.config(
        "submodule.recurse=true",
        "fetch.recurseSubmodules=true",
        f"submodule.sub.url={evil}",
        f"filter.spy.smudge={hostile.spy('smudge')}",
        "protocol.file.allow=always",
    )
    (hostile.clone / "sub").mkdir()  # a submodule not checked out: an empty folder
    _git(hostile.clone, "update-index", "--add", "--cacheinfo", f"160000,{sha},sub")
    with pytest.raises(NestedRepositoryError, match="sub is a gitlink"):
        hostile.ws.commit_all("feat: sub")
    # committed anyway (sandboxed git can write refs): the push refuses it by name
    _git(hostile.clone, "commit", "-qm", "sub", "--no-verify")
    with pytest.raises(
        NestedRepositoryError, match="refusing to push veranda/eng-30: sub is a gitlink"
    ):
        hostile.ws.push()
    assert hostile.on_server() == ""
    hostile.ws.ensure()  # fetch with the planted recursion: nothing cloned
    assert not (hostile.clone / ".git" / "modules").exists()
    assert not (hostile.clone / "sub" / "f").exists()
    assert_contained(hostile.records())


@pytest.mark.parametrize("kind", ["symlink", "gitfile"])
def test_a_git_dir_replaced_by_a_link_or_a_gitfile_is_refused_before_any_transfer(
    hostile: Hostile, kind: str
) -> None:
    """The clone's ``.git`` moved inside the work tree (where sandboxed code can reach it) and
    replaced by a link or a ``gitdir:`` file: fetch and push refuse it, naming it, and the
    server gets nothing."""
    (hostile.clone / "app.py").write_text("x = 2\n")
    hostile.ws.commit_all("fix: x")
    moved = hostile.clone / ".hostile" / "real-git"
    moved.parent.mkdir(exist_ok=True)
    (hostile.clone / ".git").rename(moved)
    if kind == "symlink":
        (hostile.clone / ".git").symlink_to(moved)
    else:
        (hostile.clone / ".git").write_text(f"gitdir: {moved}\n")
    with pytest.raises(GitDirError, match=r"ENG-30/\.git is a link or a file"):
        hostile.ws.push()
    with pytest.raises(GitDirError, match=r"\.git is a link or a file"):
        hostile.ws.pin_origin()
    assert hostile.on_server() == ""


def test_a_link_inside_git_is_refused_before_any_transfer(hostile: Hostile, tmp_path: Path) -> None:
    """``FETCH_HEAD`` linked to a worker file: an unsandboxed fetch would write through it."""
    victim = tmp_path / "victim"
    victim.write_text("the worker's own file\n")
    (hostile.clone / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
    (hostile.clone / ".git" / "FETCH_HEAD").symlink_to(victim)
    with pytest.raises(GitDirError, match="FETCH_HEAD is a link or a special file"):
        hostile.ws.ensure()
    assert victim.read_text() == "the worker's own file\n"


def test_alternates_and_commondir_are_removed_before_a_push(
    hostile: Hostile, tmp_path: Path
) -> None:
    (hostile.clone / "app.py").write_text("x = 5\n")
    hostile.ws.commit_all("fix: five")
    git_dir = hostile.clone / ".git"
    (git_dir / "objects" / "info").mkdir(exist_ok=True)
    (git_dir / "objects" / "info" / "alternates").write_text(f"{tmp_path}/elsewhere/objects\n")
    (git_dir / "objects" / "info" / "http-alternates").write_text("http://127.0.0.1:9/x\n")
    (git_dir / "commondir").write_text(str(tmp_path / "elsewhere") + "\n")
    (git_dir / "config.worktree").write_text(f"[core]\n\tsshCommand = {hostile.spy('ssh')}\n")
    hostile.ws.push()
    assert hostile.on_server() == "x = 5\n"
    for rel in git_transport.REMOVED_FROM_GIT_DIR:
        assert not (git_dir / rel).exists(), rel
    assert_contained(hostile.records())


# --- bounds ----------------------------------------------------------------------------------


def test_the_work_tree_walk_is_bounded_and_fails_closed(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nested_repos, "MAX_WORKTREE_WALK_ENTRIES", 5)
    for i in range(6):
        (hostile.clone / f"f{i}.txt").write_text("x\n")
    with pytest.raises(NestedRepositoryError, match="more than 5 entries outside ignored"):
        hostile.ws.commit_all("many")
    (hostile.clone / ".gitignore").write_text(".hostile/\nbig/\n")
    for i in range(6):
        (hostile.clone / f"f{i}.txt").unlink()
    (hostile.clone / "big").mkdir()
    for i in range(50):  # an ignored folder is not walked
        (hostile.clone / "big" / f"f{i}").write_text("x\n")
    hostile.ws.commit_all("ignore big")


def test_the_git_dir_walk_is_bounded_and_fails_closed(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_transport, "MAX_GIT_DIR_ENTRIES", 5)
    with pytest.raises(GitDirError, match="holds more than 5 entries"):
        hostile.ws.push()


# --- push protection -------------------------------------------------------------------------

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
PNG += bytes(range(256))  # every byte value, most of them invalid UTF-8


def test_a_binary_file_does_not_crash_push_protection(hostile: Hostile) -> None:
    (hostile.clone / "logo.png").write_bytes(PNG)
    (hostile.clone / "app.py").write_text("x = 2\n")
    hostile.ws.commit_all("feat: logo")
    hostile.ws.push()
    assert hostile.on_server() == "x = 2\n"


ENCODED: dict[str, tuple[str, bytes]] = {
    "base64": ("notes.txt", b"blob: " + base64.b64encode(b"k=" + SECRET.encode()) + b"\n"),
    "hex": ("notes.txt", SECRET.encode().hex().encode() + b"\n"),
    "reversed": ("notes.txt", SECRET[::-1].encode() + b"\n"),
    "in a binary": ("logo.png", PNG + SECRET.encode() + PNG),
    "file name": (f"keys/{SECRET}.txt", b"nothing here\n"),
}


@pytest.mark.parametrize("form", list(ENCODED))
def test_an_encoded_secret_or_a_secret_file_name_is_never_pushed(
    hostile: Hostile, form: str
) -> None:
    rel, data = ENCODED[form]
    (hostile.clone / rel).parent.mkdir(parents=True, exist_ok=True)
    (hostile.clone / rel).write_bytes(data)
    hostile.ws.commit_all("docs: notes")
    with pytest.raises(SecretInChangeError) as caught:
        hostile.ws.push()
    expected = {
        "file name": "a file name holds the value of the forge token",
        "in a binary": "logo.png adds the value of the forge token",
    }.get(form, f"notes.txt adds the value of the forge token ({form})")
    assert str(caught.value) == f"refusing to push {BRANCH}: {expected}"
    assert SECRET not in str(caught.value)
    assert hostile.on_server() == ""


# --- the seam --------------------------------------------------------------------------------


def test_only_object_transfer_runs_outside_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``git`` first on ``PATH`` logs each call's uid and argv: through a whole ticket's git
    (clone, checkout, commit, diff, the context readers, push), every call but clone, fetch,
    ls-remote and push ran as the sandbox's user."""
    from veranda_dagster.domain.clone.git_recovery import is_whole_clone
    from veranda_dagster.domain.context.code_search import LocalGitGrep
    from veranda_dagster.domain.context.layers import exclude_from_git
    from veranda_dagster.domain.deliver.citations import git_file_lines

    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout
    spy_dir = tmp_path / "spy-bin"
    spy_dir.mkdir()
    ws_root = tmp_path / "ws"
    (spy_dir / "git").write_text(  # the product's calls only: the test's own git works elsewhere
        "#!/bin/sh\n"
        f'case "$PWD" in {ws_root}|{ws_root}/*)\n'
        '  if [ -d "$PWD/.git" ]; then log="$PWD/.git/spy.log"; else log="$PWD/spy.log"; fi\n'
        '  echo "$(awk \'/^Uid:/{print $2}\' /proc/self/status) $*" >> "$log" ;;\n'
        "esac\n"
        f'exec {real.strip()} "$@"\n'
    )
    (spy_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{spy_dir}:{__import__('os').environ['PATH']}")
    bare = _seed_remote(tmp_path, BASE_FILES)
    with GitHttpServer(bare.parent.parent, SECRET) as server:
        ws = Workspace(
            tmp_path / "ws", "ENG-32", server.url_for("acme/app"), BRANCH, SECRET, USERNAME
        )
        ws.ensure()
        (ws.path / "app.py").write_text("x = 2\n")
        ws.commit_all("fix: x")
        ws.diff(ws.base_sha())
        grep = LocalGitGrep(ws.path)
        assert [hit.path for hit in grep.search("x = 2")] == ["app.py"]
        assert git_file_lines(ws.path, "HEAD")("app.py") == 1
        exclude_from_git(ws.path, ["CLAUDE.md"])
        assert is_whole_clone(ws.path)
        ws.push()
    lines = [
        line
        for log in (ws.path / ".git" / "spy.log", ws_root / "spy.log")
        for line in log.read_text().splitlines()
    ]
    outside = [line for line in lines if line.split(" ", 1)[0] != SANDBOX_UID]
    inside = [line for line in lines if line.split(" ", 1)[0] == SANDBOX_UID]
    verbs = {
        next(a for a in line.split()[1:] if not a.startswith("-") and "=" not in a)
        for line in outside
    }
    assert verbs == {"clone", "fetch", "ls-remote", "push"}, outside
    for verb in ("checkout", "add", "commit", "diff", "cat-file", "rev-parse", "ls-files"):
        assert any(f" {verb} " in f"{line} " for line in inside), verb


def test_a_sandboxed_git_that_hangs_is_killed_at_its_bound_with_everything_it_started(
    hostile: Hostile,
) -> None:
    """A clean filter that sleeps: the product's git gives up at its timeout with a typed
    error, and the filter dies with the sandbox (it never gets to write its mark)."""
    mark = hostile.clone / ".hostile" / "late"
    hostile.spy("clean")
    hostile.config(f"filter.slow.clean=sh -c 'sleep 3; touch {mark}; cat'")
    (hostile.clone / ".gitattributes").write_text("*.py filter=slow\n")
    (hostile.clone / "app.py").write_text("x = 9\n")
    with pytest.raises(GitError, match=r"git add timed out after 0.5s"):
        hostile.ws.git("add", "--all", timeout=0.5)
    time.sleep(4)
    assert not mark.exists()
