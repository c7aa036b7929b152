"""The per-ticket git clone, which is disposable: the forge holds the truth.

Every work product is committed on the ticket's branch and pushed, so a new pod whose directory
is gone recreates the clone from the forge and finds the branch where the last phase left it.
The token never enters the remote URL, ``.git/config``, any argv or any environment: git asks
for it through ``git_command.git_askpass``, and only for the configured remote.

The work tree is the repository's and the agent's, so ``git`` runs every command that reads it,
the index or the objects inside the sandbox (``git_command.run_git``: no network, no
credential); only clone, fetch, ls-remote and push run outside, on a ``.git`` the product
rewrote just before (``git_transport``). A fresh clone is made with ``--no-checkout`` and
checked out in the sandbox, so nothing of the repository (``.gitattributes``, an LFS pointer)
is interpreted by an unsandboxed git. Nested repositories and gitlinks the base does not have
are refused before staging and before pushing (``nested_repos``), and push protection looks
for the worker's secrets in every form it knows (``push_protection``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from veranda_dagster.domain.clone.borrowed_objects import forget_borrow, record_borrow
from veranda_dagster.domain.clone.git_command import (
    GitError,
    git_askpass,
    run_git,
    token_allowed,
)
from veranda_dagster.domain.clone.git_recovery import (
    clear_partial_clones,
    clear_stale_locks,
    is_whole_clone,
    partial_clone_dir,
)
from veranda_dagster.domain.clone.git_transport import (
    TRANSPORT_COMMANDS,
    harden_git_dir,
    run_transport,
    transport_env,
)
from veranda_dagster.domain.clone.nested_repos import (
    added_gitlinks,
    gitlinks,
    nested_git_entries,
    refuse_new,
)
from veranda_dagster.domain.clone.object_cache import ObjectCache, clone_from_store
from veranda_dagster.domain.clone.push_protection import diff_leak, find, needles
from veranda_dagster.domain.clone.workspace_use import mark_used
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.domain.core.redaction import environ_secrets
from veranda_dagster.domain.core.ticket_key import ticket_dir

GIT_TIMEOUT_S = 300.0
"""A clone or push of a large repository; anything slower is a hung network, not work."""

BOT_NAME = "veranda"
BOT_EMAIL = "veranda@users.noreply.localhost"
IDENTITY = ("-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}")

__all__ = ["GitError", "SecretInChangeError", "Workspace"]


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
        objects: ObjectCache | None = None,
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
        self.objects = objects
        """The repository's shared object store a new clone borrows from (``object_cache``);
        ``None``: clone from the forge directly."""
        self._default_branch = ""
        """The forge's default branch as ``ensure`` asked the forge, not as the clone's
        ``refs/remotes/origin/HEAD`` says (sandboxed code can move that)."""

    @property
    def path(self) -> Path:
        """``root/<ticket key>``; a key outside the grammar (``..``, a slash, a control
        character) is a typed error before any folder is made."""
        return ticket_dir(self.root, self.ticket_id)

    # --- git plumbing ------------------------------------------------------------------------

    def git(self, *args: str, cwd: Path | None = None, timeout: float | None = None) -> str:
        """``git args`` with the bot identity, its output as text (undecodable bytes replaced):
        sandboxed, except clone/fetch/ls-remote/push (``git_bytes``)."""
        out = self.git_bytes(*args, cwd=cwd, timeout=timeout)
        return out.decode("utf-8", errors="replace").strip()

    def git_bytes(self, *args: str, cwd: Path | None = None, timeout: float | None = None) -> bytes:
        """``git args`` in ``cwd`` (the clone by default), its output as bytes. A transport
        command runs outside the sandbox on a hardened ``.git`` with the token offered (through
        askpass) only when the remote is one a token may go to; anything else runs sandboxed
        with neither network nor token. ``timeout`` defaults to ``GIT_TIMEOUT_S``."""
        where = Path(cwd) if cwd is not None else self.path
        timeout = GIT_TIMEOUT_S if timeout is None else timeout
        try:
            if args and args[0] in TRANSPORT_COMMANDS:
                proc = self._transport(args, where, timeout)
            else:
                proc = run_git(where, [*IDENTITY, *args], timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise GitError(f"git {args[0]} timed out after {timeout:.0f}s") from None
        except InputError as exc:  # the sandboxed run's own timeout or a missing git
            raise GitError(str(exc)) from None
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).decode("utf-8", errors="replace").strip()
            if self._token:
                detail = detail.replace(self._token, "***")
            raise GitError(f"git {' '.join(args[:2])} failed: {detail[-500:]}")
        return proc.stdout

    def _transport(
        self, args: tuple[str, ...], where: Path, timeout: float
    ) -> subprocess.CompletedProcess[bytes]:
        """Object transfer, outside the sandbox: on a clone, only after its ``.git`` was
        rewritten by the product (``harden_git_dir``)."""
        if args[0] != "clone" and os.path.lexists(where / ".git"):
            harden_git_dir(where, self.clone_url)
        env = transport_env(where)
        with contextlib.ExitStack() as stack:
            if self._token and token_allowed(self.clone_url):
                env.update(stack.enter_context(git_askpass(self._token, self.git_username)))
            return run_transport(args, where, self.clone_url, env, timeout)

    # --- lifecycle ---------------------------------------------------------------------------

    def ensure(self) -> Path:
        """Recover what a killed git left, clone if absent, then check out the work branch
        (from the forge if it exists there)."""
        self.recovered = self.recover()
        mark_used(self.root, self.ticket_id)  # eviction keeps what was used last
        if not (self.path / ".git").exists():
            self.clone()
        self.pin_origin()
        self.git("fetch", "--quiet", "origin")
        self._default_branch, on_forge = self._ask_forge(self.branch)
        if on_forge:
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
        leaves something that looks like a clone. The clone transfers objects only (from the
        repository's shared store when there is one); the checkout, which reads the
        repository's attributes, runs in the sandbox (which shows the borrowed store
        read-only)."""
        self.root.mkdir(parents=True, exist_ok=True)
        partial = partial_clone_dir(self.path)
        shutil.rmtree(partial, ignore_errors=True)
        if self.objects is not None:  # the repository's store, fetched fresh, borrowed from
            # recorded first: a sweep deciding under the store's lock sees this borrower
            record_borrow(self.path, self.objects.store_for(self.clone_url))
            store = self.objects.refresh(self.clone_url, self._token, self.git_username)
            clone_from_store(store, partial, GIT_TIMEOUT_S)
        else:
            forget_borrow(self.path)
            source = self.clone_url
            self.git("clone", "--quiet", "--no-checkout", source, str(partial), cwd=self.root)
        # origin is the forge, whatever it came from; alternates name the recorded store only
        harden_git_dir(partial, self.clone_url)
        self.git("checkout", "--quiet", "--force", cwd=partial)
        os.rename(partial, self.path)

    def pin_origin(self) -> None:
        """``.git/config`` becomes the product's own (``origin`` is the configured clone URL
        and nothing else; no push URL, include, command or filter survives): a clone whose
        config was rewritten would otherwise get the token sent elsewhere, or have the
        product's unsandboxed git run what it names. Done again before every transport."""
        harden_git_dir(self.path, self.clone_url)

    def _ask_forge(self, branch: str) -> tuple[str, bool]:
        """The forge's default branch and whether ``branch`` exists there, in one round
        trip."""
        out = self.git("ls-remote", "--symref", "origin", "HEAD", f"refs/heads/{branch}")
        default, exists = "", False
        for line in out.splitlines():
            target, _, name = line.partition("\t")
            if name == "HEAD" and target.startswith("ref: refs/heads/"):
                default = target[len("ref: refs/heads/") :]
            exists = exists or name == f"refs/heads/{branch}"
        return default, exists

    def default_branch(self) -> str:
        if self._default_branch:
            return self._default_branch
        ref = self.git("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")
        return ref.removeprefix("refs/remotes/origin/")

    def current_branch(self) -> str:
        return self.git("rev-parse", "--abbrev-ref", "HEAD")

    def head_sha(self) -> str:
        return self.git("rev-parse", "HEAD")

    def base_sha(self) -> str:
        """The default branch's commit on the forge, as fetched."""
        return self.git("rev-parse", f"origin/{self.default_branch()}")

    # --- work products -----------------------------------------------------------------------

    def commit_all(self, message: str, paths: list[str] | None = None) -> str:
        """Stage ``paths`` (or everything) and commit; returns HEAD whether or not it changed.
        A nested repository or a gitlink the base does not have is refused by name before
        anything is committed."""
        self.refuse_nested_repositories()
        pathspec = paths or ["."]
        self.git("add", "--all", "--", *pathspec)
        staged = self.git_bytes(
            "diff", "--cached", "--raw", "-z", "--no-renames", "HEAD", "--", *pathspec
        )
        self._refuse_gitlinks(added_gitlinks(staged), f"commit on {self.branch}")
        if staged:
            self.git("commit", "--quiet", "--no-verify", "-m", message)
        return self.head_sha()

    def refuse_nested_repositories(self) -> None:
        """Any folder of the work tree holding a ``.git`` (outside ignored folders, which
        ``git add`` leaves alone) that the base commit does not have as a gitlink."""
        listing = self.git_bytes(
            "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
        )
        ignored = [
            p.decode("utf-8", errors="replace") for p in listing.split(b"\0") if p.endswith(b"/")
        ]
        found = nested_git_entries(self.path, ignored)
        if found:
            refuse_new(
                found, self._base_gitlinks(), f"commit on {self.branch}", "nested git repository"
            )

    def _refuse_gitlinks(self, added: list[str], action: str) -> None:
        if added:  # rare: only then is the base's own list read
            refuse_new(added, self._base_gitlinks(), action, "gitlink (submodule)")

    def _base_gitlinks(self) -> set[str]:
        try:
            return gitlinks(
                self.git_bytes("ls-tree", "-r", "-z", f"origin/{self.default_branch()}")
            )
        except GitError:  # no base fetched yet: every gitlink is new
            return set()

    def push(self) -> None:
        """Fetch the default branch as the forge has it (the base the checks compare with
        must not be one sandboxed code moved), refuse new gitlinks and secrets, then push."""
        self.pin_origin()
        default = self.default_branch()
        self.git(
            "fetch", "--quiet", "origin", f"+refs/heads/{default}:refs/remotes/origin/{default}"
        )
        raw = self.git_bytes("diff", "--raw", "-z", "--no-renames", f"origin/{default}...HEAD")
        self._refuse_gitlinks(added_gitlinks(raw), f"push {self.branch}")
        self.refuse_secrets()
        self.git("push", "--quiet", "--force-with-lease", "origin", f"HEAD:{self.branch}")

    def refuse_secrets(self, environ: Mapping[str, str] | None = None) -> None:
        """Push protection, like the forge's own: every line the branch adds over the default
        branch, every file name and every commit message is checked, as bytes, for the token
        and each secret the worker's environment holds (``redaction.environ_secrets``), in
        each form ``push_protection`` knows."""
        named = {self._token: "the forge token"} if self._token else {}
        for name, value in (os.environ if environ is None else environ).items():
            for secret in environ_secrets({name: value}):
                named.setdefault(secret, f"${name}")
        if not named:
            return
        forms = needles(named)
        base = f"origin/{self.default_branch()}"
        diff = self.git_bytes(
            *("-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff"),
            *("--no-textconv", "--no-renames", "--text", "--unified=0", f"{base}...HEAD"),
        )
        leak = diff_leak(diff, forms)
        if leak:
            raise SecretInChangeError(f"refusing to push {self.branch}: {leak}")
        hit = find(self.git_bytes("log", "--format=%B", f"{base}..HEAD"), forms)
        if hit:
            raise SecretInChangeError(
                f"refusing to push {self.branch}: a commit message holds {hit.describe()}"
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
