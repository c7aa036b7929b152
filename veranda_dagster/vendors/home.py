"""A private CLI home per turn, copied from the configured ``home`` as a read-only template.

A vendors ``home`` is one folder on the worker. Were it the CLI's writable home, every
ticket's agent would share it: one ticket's agent writes ``~/.claude/CLAUDE.md`` (or a
``settings.json`` with hooks) and the next ticket's CLI obeys it. So the configured folder is
only a template: each turn gets a fresh copy in a 0700 temporary folder, which is the only
home the sandbox binds writable, and the copy is removed when the turn (and the vendor's
reading of what the CLI left there, such as Kimi's session usage) is done.

Login sessions kept in the template (``~/.claude/.credentials.json``) are copied like the rest,
so a login-mode CLI still finds them; they are therefore visible inside that turn's sandbox.

The copy is bounded (``MAX_HOME_TEMPLATE_BYTES``, ``MAX_HOME_TEMPLATE_ENTRIES``): a template
that grew past them (a CLI cache written into it by hand) is refused with a typed error, not
copied for minutes on every turn.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from veranda_dagster.domain.core.errors import ConfigError

MAX_HOME_TEMPLATE_BYTES = 64 * 1024 * 1024
"""A CLI home holds settings, a login session and small state files: kilobytes. 64 MiB leaves
room for a plugin or two and refuses a home that became a cache."""
MAX_HOME_TEMPLATE_ENTRIES = 10_000
"""Files, folders and links counted together; bounds the walk as well as the copy."""


class HomeTemplateTooLargeError(ConfigError):
    """The configured ``home`` exceeds the bounds a per-turn copy is allowed."""


def template_size(template: Path) -> tuple[int, int]:
    """(bytes, entries) of ``template``'s regular files and entries, stopping with
    ``HomeTemplateTooLargeError`` as soon as either bound is passed; links are not followed."""
    total = entries = 0
    for dirpath, dirnames, filenames in os.walk(template, followlinks=False):
        entries += len(dirnames) + len(filenames)
        if entries > MAX_HOME_TEMPLATE_ENTRIES:
            raise HomeTemplateTooLargeError(
                f"CLI home template {template} has more than {MAX_HOME_TEMPLATE_ENTRIES} "
                "entries; keep only settings and login sessions there"
            )
        for name in filenames:
            info = os.lstat(os.path.join(dirpath, name))
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
            if total > MAX_HOME_TEMPLATE_BYTES:
                raise HomeTemplateTooLargeError(
                    f"CLI home template {template} is larger than {MAX_HOME_TEMPLATE_BYTES} "
                    "bytes; keep only settings and login sessions there"
                )
    return total, entries


def _copy_entry(src: str, dst: str) -> None:
    """Regular files only (with their mode); sockets, fifos and devices are not a home's."""
    if stat.S_ISREG(os.lstat(src).st_mode):
        shutil.copy2(src, dst)


@contextlib.contextmanager
def private_home(template: str | None, *, empty: bool = False) -> Iterator[str | None]:
    """A fresh private copy of ``template`` for one turn, removed afterwards; with no template,
    an empty private one when ``empty`` (a CLI whose settings the vendor must write), else
    ``None`` (the sandbox then gives the CLI an empty private one)."""
    if not template and not empty:
        yield None
        return
    source = Path(template or "")
    with tempfile.TemporaryDirectory(prefix="veranda-home-") as scratch:
        os.chmod(scratch, 0o700)
        home = Path(scratch) / "home"
        if template and source.is_dir():
            template_size(source)
            shutil.copytree(source, home, symlinks=True, copy_function=_copy_entry)
            os.chmod(home, 0o700)
        else:
            home.mkdir(mode=0o700)
        yield str(home)
