"""The per-ticket git clone, which is disposable: the forge holds the truth.

Every work product is committed on the ticket's branch and pushed, so a new pod whose directory
is gone recreates the clone from the forge and finds the branch where the last phase left it.
The token never enters the remote URL, ``.git/config``, any argv or any environment: git asks
for it through ``git_command.git_askpass``, and only for the configured remote (``origin`` is
reset to it before every command that talks to the forge).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from veranda_dagster.domain.errors import ConfigError, VerandaError
from veranda_dagster.domain.git_command import (
    git_argv,
    git_askpass,
    git_env,
    token_allowed,
)
from veranda_dagster.domain.git_recovery import (
    clear_partial_clones,
    clear_stale_locks,
    is_whole_clone,
    partial_clone_dir,
)
from veranda_dagster.domain.redaction import environ_secrets
from veranda_dagster.domain.ticket_key import ticket_dir

GIT_TIMEOUT_S = 300.0
"""A clone or push of a large repository; anything slower is a hung network, not work."""

BOT_NAME = "veranda"
BOT_EMAIL = "veranda@users.noreply.localhost"


class GitError(VerandaError):
    """A git command failed; the message carries its stderr with the token redacted."""


class SecretInChangeError(GitError):
    """The branch adds a value the worker holds as a secret (an agent steered into writing its
    environment into a file or commit message): nothing is pushed. The message names the
    variable and the file, never the value."""


class Workspace:
    """One ticket's clone: ``root/<ticket_id>`` on ``branch``, tracking ``clone_url``."""

    def __init__(
        self,
        root: str | Path,
        ticket_id: str,
        clone_url: str,
        branch: str,
        token: str | None = None,
        git_username: str = "",
    ) -> None:
        if token and not git_username:
            raise ConfigError(
                f"ticket {ticket_id}: a git token needs the forge's git username beside it "
                "(its forge row names one)"
            )
        self.root = Path(root)
        self.ticket_id = ticket_id
        self.clone_url = clone_url
        self.branch = branch
        self._token = token or ""
        self.git_username = git_username
        """Sent beside the token over https; each forge has its own word for it, so its forge
        row names it and the domain holds none."""
        self.recovered: list[str] = []
        """What the last ``ensure`` recovered (stale locks, a half-made clone)."""

    @property
    def path(self) -> Path:
        """``root/<ticket key>``; a key outside the grammar (``..``, a slash, a control
        character) is a typed error before any folder is made."""
        return ticket_dir(self.root, self.ticket_id)

    # --- git plumbing ------------------------------------------------------------------------

    def git(self, *args: str, cwd: Path | None = None, timeout: float = GIT_TIMEOUT_S) -> str:
        """Run git with the bot identity and the safety config; the token is offered (through
        askpass) only when the remote is one a token may go to."""
        cmd = git_argv("-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}", *args)
        env = git_env()
        with contextlib.ExitStack() as stack:
            if self._token and token_allowed(self.clone_url):
                env.update(stack.enter_context(git_askpass(self._token, self.git_username)))
            try:
                proc = subprocess.run(
                    cmd,
                    cwd=cwd or self.path,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    env=env,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise GitError(f"git {args[0]} timed out after {timeout:.0f}s") from None
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip()
            if self._token:
                detail = detail.replace(self._token, "***")
            raise GitError(f"git {' '.join(args[:2])} failed: {detail[-500:]}")
        return proc.stdout.strip()

    # --- lifecycle ---------------------------------------------------------------------------

    def ensure(self) -> Path:
        """Recover what a killed git left, clone if absent, then check out the work branch
        (from the forge if it exists there)."""
        self.recovered = self.recover()
        if not (self.path / ".git").exists():
            self.clone()
        self.pin_origin()
        self.git("fetch", "--quiet", "origin")
        if self.remote_branch_exists(self.branch):
            self.git("checkout", "--quiet", "-B", self.branch, f"origin/{self.branch}")
        elif self.current_branch() != self.branch:
            self.git("checkout", "--quiet", "-B", self.branch, f"origin/{self.default_branch()}")
        return self.path

    def recover(self) -> list[str]:
        """Start of every git phase: a killed clone's leftovers and a half-made clone are
        removed (the forge holds the truth), and lock files no live git owns are deleted.
        Returns what was done, for the phase's log."""
        done = [f"removed partial clone {p.name}" for p in clear_partial_clones(self.path)]
        if self.path.exists() and not is_whole_clone(self.path):
            shutil.rmtree(self.path)
            done.append(f"removed half-cloned {self.path.name}; cloning again")
        done += [f"removed stale {lock.name}" for lock in clear_stale_locks(self.path)]
        return done

    def clone(self) -> None:
        """Clone beside the final place and rename in when whole, so a kill mid-clone never
        leaves something that looks like a clone."""
        self.root.mkdir(parents=True, exist_ok=True)
        partial = partial_clone_dir(self.path)
        shutil.rmtree(partial, ignore_errors=True)
        self.git("clone", "--quiet", self.clone_url, str(partial), cwd=self.root)
        os.rename(partial, self.path)

    def pin_origin(self) -> None:
        """``origin`` is the configured clone URL and nothing else: a clone whose config was
        rewritten (a push URL to another host) would otherwise get the token sent there."""
        if self.git("config", "--get-all", "remote.origin.url").splitlines() != [self.clone_url]:
            self.git("remote", "set-url", "origin", self.clone_url)
        with contextlib.suppress(GitError):  # exit 5: no push URL set, the normal case
            self.git("config", "--unset-all", "remote.origin.pushurl")

    def default_branch(self) -> str:
        ref = self.git("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")
        return ref.rsplit("/", 1)[-1]

    def remote_branch_exists(self, branch: str) -> bool:
        out = self.git("ls-remote", "--heads", "origin", branch)
        return bool(out.strip())

    def current_branch(self) -> str:
        return self.git("rev-parse", "--abbrev-ref", "HEAD")

    def head_sha(self) -> str:
        return self.git("rev-parse", "HEAD")

    def base_sha(self) -> str:
        """The default branch's commit on the forge, as fetched."""
        return self.git("rev-parse", f"origin/{self.default_branch()}")

    # --- work products -----------------------------------------------------------------------

    def commit_all(self, message: str, paths: list[str] | None = None) -> str:
        """Stage ``paths`` (or everything) and commit; returns HEAD whether or not it changed."""
        self.git("add", "--all", "--", *(paths or ["."]))
        if self.git("status", "--porcelain", "--untracked-files=no", "--", *(paths or ["."])):
            self.git("commit", "--quiet", "--no-verify", "-m", message)
        return self.head_sha()

    def push(self) -> None:
        self.pin_origin()
        self.refuse_secrets()
        self.git("push", "--quiet", "--force-with-lease", "origin", f"HEAD:{self.branch}")

    def refuse_secrets(self, environ: Mapping[str, str] | None = None) -> None:
        """Push protection, like the forge's own: every line the branch adds over the default
        branch, and every commit message, is checked for the token and for each secret the
        worker's environment holds (``redaction.environ_secrets``)."""
        named = {self._token: "the forge token"} if self._token else {}
        for name, value in (os.environ if environ is None else environ).items():
            for secret in environ_secrets({name: value}):
                named.setdefault(secret, f"${name}")
        if not named:
            return
        base = f"origin/{self.default_branch()}"
        diff = self.git("diff", "--text", "--no-color", "--unified=0", f"{base}...HEAD")
        messages = self.git("log", "--format=%B", f"{base}..HEAD")
        where = ""
        for line in diff.splitlines():
            if line.startswith("+++ "):
                where = line[6:] if line.startswith("+++ b/") else line[4:]
            elif line.startswith("+"):
                hit = next((n for s, n in named.items() if s in line), None)
                if hit:
                    raise SecretInChangeError(
                        f"refusing to push {self.branch}: {where} adds the value of {hit}"
                    )
        hit = next((n for s, n in named.items() if s in messages), None)
        if hit:
            raise SecretInChangeError(
                f"refusing to push {self.branch}: a commit message holds the value of {hit}"
            )

    def changed_files(self, base: str) -> list[str]:
        out = self.git("diff", "--name-only", f"{base}...HEAD")
        return [line for line in out.splitlines() if line]

    def diff(self, base: str) -> str:
        return self.git("diff", "--unified=0", f"{base}...HEAD")

    def file_at(self, rev: str, path: str) -> str | None:
        try:
            return self.git("show", f"{rev}:{path}")
        except GitError:
            return None
