"""The only git the product runs outside the sandbox: object transfer with the forge.

clone, fetch, ls-remote and push need the network and the credential, so they cannot run in
the sandbox; they also read no work tree. What they do read is ``.git``, which the product's
own sandboxed git may write and so a filter or driver running in there may have rewritten
(``core.sshCommand``, ``include.path`` to a planted file, an ``alternates`` file pointing at
another ticket's objects, a ``FETCH_HEAD`` linked to the worker's ``~/.bashrc``). So before
each of them ``harden_git_dir``:

* refuses a ``.git`` that is a link or a file (a gitfile names a git directory anywhere), and
  any link, FIFO or device inside ``.git`` (git writes ``FETCH_HEAD`` and reflogs through a
  link), walking at most ``MAX_GIT_DIR_ENTRIES`` entries;
* removes ``objects/info/alternates``, ``objects/info/http-alternates``, ``commondir`` and
  ``config.worktree``, then writes the alternates file afresh when the product recorded that
  the clone borrows its repository's shared store (``borrowed_objects``): that store's
  ``objects`` folder and nothing else, whatever the file said before;
* writes ``.git/config`` from scratch, from what the product knows (core settings and
  ``origin``), never parsing or keeping the old one;

and the command runs with no system or user config, hooks pointed at nothing, no submodule
recursion, and only the configured remote's protocol allowed.

Each runs in a process group of its own (``process_group.run_in_group``): at its timeout the
whole group is killed, ``git-remote-https`` and its connection with it, not only ``git``. And
a server that answers a byte now and then is given up on after ``LOW_SPEED_TIME_S`` below
``LOW_SPEED_LIMIT_BYTES_S`` instead of holding the command for its whole timeout.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from veranda_dagster.domain.clone.borrowed_objects import alternates_line, borrowed_store
from veranda_dagster.domain.clone.git_command import (
    GIT_PINNED_ENV,
    SAFE_GIT_CONFIG,
    GitError,
    git_env,
)
from veranda_dagster.domain.core.process_group import run_in_group

MAX_GIT_DIR_ENTRIES = 200_000
"""A ``.git`` after a clone holds a few dozen entries plus loose objects; a walk past this is a
planted maze, refused rather than walked."""

LOW_SPEED_LIMIT_BYTES_S: Final = 1
"""An http(s) transfer averaging under a byte a second for ``LOW_SPEED_TIME_S`` is a stalled
or trickling server. Not higher: a forge computing a large pack sends nothing but
upload-pack's keep-alive (five bytes every five seconds, about this rate) until the pack
starts, and that wait is work, not a stall."""

LOW_SPEED_TIME_S: Final = 60
"""How long a transfer may stay under ``LOW_SPEED_LIMIT_BYTES_S``: a minute of (near)
silence ends the command then, not at its own timeout (five or ten minutes)."""

TRANSPORT_COMMANDS = frozenset({"clone", "fetch", "ls-remote", "push"})
"""The only git subcommands run outside the sandbox."""

REMOVED_FROM_GIT_DIR = (
    "objects/info/alternates",
    "objects/info/http-alternates",
    "commondir",
    "config.worktree",
)
"""Files that make git read objects, refs or config from elsewhere."""

_CONFIG_VALUE = re.compile(r"[^\x00-\x1f\x7f]+")


class GitDirError(GitError):
    """The clone's ``.git`` is not something the product will run git on outside the sandbox
    (a link, a gitfile, a link or device inside it); the message names the entry."""


def url_protocol(url: str) -> str:
    """The git protocol ``url`` uses: its scheme, ``ssh`` for ``user@host:path``, ``file`` for
    a local path (the tests' bare repositories)."""
    if "://" in url:
        return urlsplit(url).scheme.lower()
    head = url.split("/", 1)[0]
    return "ssh" if ":" in head else "file"


def transport_config(clone_url: str) -> tuple[str, ...]:
    """``-c`` flags of every transport command: the safety config, no submodule recursion, no
    automatic gc or maintenance (a fetch would otherwise start them, outside the sandbox), no
    protocol but the configured remote's."""
    return (
        *SAFE_GIT_CONFIG,
        "-c", "fetch.recurseSubmodules=false",
        "-c", "push.recurseSubmodules=no",
        "-c", "submodule.recurse=false",
        "-c", "gc.auto=0",
        "-c", "maintenance.auto=false",
        "-c", "protocol.allow=never",
        "-c", f"protocol.{url_protocol(clone_url)}.allow=always",
        "-c", "core.logAllRefUpdates=false",
        "-c", f"http.lowSpeedLimit={LOW_SPEED_LIMIT_BYTES_S}",
        "-c", f"http.lowSpeedTime={LOW_SPEED_TIME_S}",
    )  # fmt: skip


def run_transport(
    args: Sequence[str], cwd: Path, clone_url: str, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """``git <transport config> args`` in ``cwd``, outside the sandbox, in a process group of
    its own that is killed whole at ``timeout`` (``subprocess.TimeoutExpired`` then); the
    caller hardened ``.git`` and built ``env`` (``transport_env``, askpass)."""
    return run_in_group(
        ["git", *transport_config(clone_url), *args], cwd=cwd, env=env, timeout=timeout
    )


def _quoted(value: str) -> str:
    if not _CONFIG_VALUE.fullmatch(value):
        raise GitDirError("a git config value holds a control character; refusing to write it")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fresh_config(clone_url: str) -> str:
    """The whole ``.git/config`` of a clone: core settings and ``origin``, nothing kept."""
    return (
        "[core]\n"
        "\trepositoryformatversion = 0\n"
        "\tfilemode = true\n"
        "\tbare = false\n"
        "\tlogallrefupdates = true\n"
        '[remote "origin"]\n'
        f"\turl = {_quoted(clone_url)}\n"
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    )


def _refuse_odd_entries(git_dir: Path) -> None:
    """Every entry under ``git_dir`` is a plain folder or a plain file; bounded walk."""
    seen = 0
    for top, dirs, files in os.walk(git_dir, followlinks=False):
        for name in [*dirs, *files]:
            seen += 1
            if seen > MAX_GIT_DIR_ENTRIES:
                raise GitDirError(
                    f"{git_dir} holds more than {MAX_GIT_DIR_ENTRIES} entries; refusing to "
                    "run git on it outside the sandbox"
                )
            path = Path(top) / name
            mode = path.lstat().st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                rel = path.relative_to(git_dir.parent)
                raise GitDirError(
                    f"{rel} is a link or a special file; the product's git does not follow it "
                    "outside the sandbox"
                )


def harden_git_dir(repo: Path, clone_url: str) -> None:
    """Make ``repo/.git`` safe for a transport command (see the module docstring)."""
    git_dir = repo / ".git"
    if git_dir.is_symlink() or (os.path.lexists(git_dir) and not git_dir.is_dir()):
        raise GitDirError(
            f"{repo.name}/.git is a link or a file, not the clone's own git directory; "
            "refusing to fetch or push from it"
        )
    if not git_dir.is_dir():
        raise GitDirError(f"{repo.name} has no .git; nothing to fetch into or push from")
    _refuse_odd_entries(git_dir)
    for rel in REMOVED_FROM_GIT_DIR:
        (git_dir / rel).unlink(missing_ok=True)
    store = borrowed_store(repo)
    if store is not None:
        _write_new(git_dir / "objects" / "info" / "alternates", alternates_line(store))
    _write_new(git_dir / "config", fresh_config(clone_url))


def _write_new(path: Path, text: str) -> None:
    """``path`` replaced by ``text``, staged beside it: never written through a link."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(path.name + ".veranda-new")
    staged.unlink(missing_ok=True)
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(staged, path)


def transport_env(cwd: Path) -> dict[str, str]:
    """The allowlisted environment (proxies and certificates: this one talks to the network),
    the pinned settings, and a ceiling so git looks for no repository above ``cwd``."""
    ceiling = str(Path(os.path.abspath(cwd)).parent)
    return {**git_env(), **GIT_PINNED_ENV, "GIT_CEILING_DIRECTORIES": ceiling}


def fresh_bare_config() -> str:
    """The whole config of a repository's shared store: bare, no remote (every fetch names
    the forge's URL on its command line), nothing kept."""
    return "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"


def harden_bare_store(store: Path) -> None:
    """The shared store's equivalent of ``harden_git_dir``: no links or special files inside,
    no alternates, the product's own config. Only transport git ever writes the store, but
    its contents come from the forge, so it gets the same checks before each fetch."""
    if store.is_symlink() or not store.is_dir():
        raise GitDirError(f"{store.name} is not a plain directory; refusing to fetch into it")
    _refuse_odd_entries(store)
    for rel in REMOVED_FROM_GIT_DIR:
        (store / rel).unlink(missing_ok=True)
    _write_new(store / "config", fresh_bare_config())
