"""How the product itself runs git in a clone it does not trust.

The clone holds the repository's code, and before the sandbox existed its tests could write
``.git`` too: a planted hook or ``core.fsmonitor`` command then ran inside the product's own
``git commit`` with every worker secret in its environment, and the forge token rode in git's
argv (``http.extraHeader``), readable by any process through ``/proc/<pid>/cmdline``. So every
product git call:

* carries ``SAFE_GIT_CONFIG``: hooks pointed at nothing, fsmonitor off, the ``ext::`` transport
  off, redirects not followed (a redirect must not take the token to another host), no
  configured credential helper;
* runs with ``git_env``: an allowlist, never the worker's whole environment;
* gets the token, when the remote needs one, only through ``GitAskpass``: a 0600 file in a
  0700 directory that git's ``GIT_ASKPASS`` script prints, so the token is in no argv and no
  environment, and the file is gone when the command ends.

And since a work tree that untrusted code wrote is itself hostile to git (a nested repository's
``filter.<x>.clean``, a ``.gitattributes`` routing files through a textconv or diff driver,
``core.pager``/``core.editor``/``core.sshCommand``, ``include.path``, submodule recursion), git
is split in two (issue 30):

* ``run_git`` / ``popen_git``, the one seam for every command that reads or writes the work
  tree, the index or the object store (status, add, diff, commit, checkout, reset, log, grep,
  cat-file, ...): it runs **inside the sandbox**, no network, no credential, an allowlisted
  environment, the clone writable including its ``.git``. Whatever git runs on the
  repository's say-so runs in there with it.
* network transfer (clone, fetch, ls-remote, push) runs outside with the credential, but only
  through ``git_transport``, which first rewrites the clone's ``.git`` to what the product
  composed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from veranda_dagster.domain.clone.borrowed_objects import store_binds
from veranda_dagster.domain.core.errors import ConfigError, InputError, VerandaError
from veranda_dagster.sandbox import Sandbox

SAFE_GIT_CONFIG: tuple[str, ...] = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "protocol.ext.allow=never",
    "-c", "http.followRedirects=false",
    "-c", "credential.helper=",
)  # fmt: skip

GIT_ENV_ALLOWLIST = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "GIT_SSL_CAINFO", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
    "no_proxy",
)  # fmt: skip
"""What git needs to find itself, its certificates and a proxy; keys and tokens stay out."""

TOKEN_FILE_ENV = "VERANDA_GIT_TOKEN_FILE"
_USERNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""A username askpass may print: it is pasted into a shell script, so nothing else."""


def _askpass_script(username: str) -> str:
    if not _USERNAME.fullmatch(username):
        raise ConfigError(f"git username {username!r} is not a plain account name")
    return f"""#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' {username} ;;
  *) cat "${TOKEN_FILE_ENV}" ;;
esac
"""


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def git_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    source = os.environ if environ is None else environ
    env = {k: source[k] for k in GIT_ENV_ALLOWLIST if source.get(k)}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def git_argv(*args: str, cwd: str | Path | None = None) -> list[str]:
    """``git`` with the safety config, optionally ``-C cwd``, then ``args``."""
    where = ["-C", str(cwd)] if cwd is not None else []
    return ["git", *SAFE_GIT_CONFIG, *where, *args]


class GitError(VerandaError):
    """A git command failed; the message carries its stderr with the token redacted."""


GIT_PINNED_ENV: dict[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
}
"""Set on every product git: no system or user config (an operator's ``~/.gitconfig`` alias
or ``core.pager`` is no business of the product's git), no system attributes, no ``replace``
refs swapping one object for another under the product's diff and push."""

SANDBOXED_ENV_KEYS = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""What a sandboxed git keeps of the worker's environment: its locale. No proxy (it has no
network), no certificate paths, no ``HOME`` (the sandbox gives its own)."""


def sandboxed_git_env(
    repo_dir: str | Path, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The exact environment of a sandboxed git: a ``PATH`` holding git and ``/bin/sh`` (the
    only things git itself starts), the locale, the pinned settings, and a ceiling so git never
    looks for a repository above the clone."""
    source = os.environ if environ is None else environ
    found = shutil.which("git", path=source.get("PATH"))
    dirs = [os.path.dirname(found)] if found else []
    path = os.pathsep.join(dict.fromkeys([*dirs, "/usr/bin", "/bin"]))
    env = {k: source[k] for k in SANDBOXED_ENV_KEYS if source.get(k)}
    ceiling = str(Path(os.path.abspath(repo_dir)).parent)
    return {"PATH": path, **env, **GIT_PINNED_ENV, "GIT_CEILING_DIRECTORIES": ceiling}


def _sandboxed(repo_dir: str | Path, args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """argv and env of ``git args`` run in the sandbox with ``repo_dir`` as its writable cwd
    (``.git`` included: this is the product's own git), no network, and the repository's
    shared store, when the clone borrows from it, read-only at its own path."""
    prepared = Sandbox().prepare(
        git_argv(*args),
        repo_dir,
        sandboxed_git_env(repo_dir),
        network="none",
        protect_git=False,
        ro_binds=store_binds(repo_dir),
    )
    return prepared.argv, prepared.env


def run_git(
    repo_dir: str | Path,
    args: Sequence[str],
    *,
    timeout: float,
    check: bool = True,
    feed: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """``git args`` in ``repo_dir``, sandboxed (see the module docstring), output captured; a
    missing git, a timeout or (with ``check``) a non-zero exit is an ``InputError`` naming the
    command and the clone, with the end of git's stderr."""
    argv, env = _sandboxed(repo_dir, args)
    try:
        proc = subprocess.run(
            argv,
            cwd=str(repo_dir),
            env=env,
            input=feed,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise InputError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"git {_verb(args)} timed out after {timeout:g}s in {repo_dir}") from None
    if check and proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip()[-300:]
        raise InputError(f"git {_verb(args)} failed in {repo_dir}: {detail}")
    return proc


def _verb(args: Sequence[str]) -> str:
    """The subcommand of ``args``, past any ``-c key=value``."""
    rest = iter(args)
    for arg in rest:
        if arg == "-c":
            next(rest, None)
        elif not arg.startswith("-"):
            return arg
    return "(no command)"


def popen_git(repo_dir: str | Path, args: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """``git args`` in ``repo_dir``, sandboxed, as a process the caller streams
    (``cat-file --batch``); killing it kills the sandbox and everything in it."""
    argv, env = _sandboxed(repo_dir, args)
    try:
        return subprocess.Popen(argv, cwd=str(repo_dir), env=env, **popen)
    except FileNotFoundError:
        raise InputError("git is not installed") from None


def token_allowed(remote_url: str) -> bool:
    """Whether a token may be offered to ``remote_url``: https anywhere, plain http only on a
    loopback address (the simulation's forge), never a local path or another scheme."""
    parts = urlsplit(remote_url)
    if parts.scheme == "https":
        return bool(parts.hostname)
    return parts.scheme == "http" and (parts.hostname or "") in LOOPBACK_HOSTS


@contextmanager
def git_askpass(token: str, username: str) -> Iterator[dict[str, str]]:
    """The env additions that let git ask for ``token`` (as ``username``, which the forge row
    names: each forge has its own word for "the token is the password"): a script path and a
    file path, never the value. Both live in a fresh 0700 directory removed on exit."""
    script_text = _askpass_script(username)
    folder = Path(tempfile.mkdtemp(prefix="veranda-git-"))
    try:
        token_file = folder / "token"
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(token)
        script = folder / "askpass"
        script.write_text(script_text)
        script.chmod(0o700)
        yield {"GIT_ASKPASS": str(script), TOKEN_FILE_ENV: str(token_file)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
