"""The subcommands a repository's command line declares (``celery worker``, ``pre-commit
autoupdate``, ``tox devenv``, ``alembic revision``, ``sentry-cli releases``).

A ticket that runs ``celery worker`` or ``poetry export`` places itself by the subcommand as much
as by the command: the umbrella's command with a plugin's subcommand is the classic sibling case.
The names are read from what the repository itself declares, in its CLI modules only (the module
a console script points at, and files named ``cli``, ``__main__``, ``main`` or ``command(s)``
and the members of a ``commands`` / ``cmd`` folder in its package or source tree):

- a click/typer group's ``@<group>.command()`` / ``.group()`` functions, or their ``name``
  argument; argparse ``add_parser("name")``; ``add_command("name", ...)`` (tox); a cobra
  ``Use: "name"``; a clap ``Command::new("name")``; a commander ``.command('name')``; a cleo
  command class's ``name = "export"``; a literal ``COMMANDS = [...]`` list;
- the top-level public functions of a module named ``command.py`` / ``commands.py`` (alembic's
  ``command.revision``);
- the module and folder names of a ``commands`` / ``cmd`` / package ``bin`` folder, or of a
  ``cli`` folder at the package's top, one module per subcommand (pre-commit's
  ``commands/autoupdate.py``, sentry-cli's ``src/commands/releases/``, prefect's
  ``cli/deployment.py``).

Text is only matched, never run. At most ``MAX_SUBCOMMAND_FILE_READS`` forge reads (listings
and files, each file within ``MAX_VOCABULARY_FILE_BYTES``) and ``MAX_SUBCOMMANDS`` names.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from typing import Final

from veranda_dagster.domain.core.bounds import (
    MAX_SUBCOMMAND_FILE_READS,
    MAX_SUBCOMMANDS,
    MAX_VOCABULARY_FILE_BYTES,
)
from veranda_dagster.domain.intake.read_budget import Lister, ReadBudget, Reader

CLI_MODULES: Final = ("cli.py", "__main__.py", "main.py", "command.py", "commands.py")
"""Files of a package (or its ``cli`` folder) that hold its command line, by the names people
give them."""
FUNCTION_MODULES: Final = ("command.py", "commands.py")
"""A module so named lists one public function per subcommand (alembic's ``command.py``)."""
MEMBER_FOLDERS: Final = ("commands", "cmd", "subcommands", "bin")
"""Folders whose members are one subcommand each (``bin`` only inside a package: at the root it
holds scripts)."""
CLI_FOLDERS: Final = ("cli", "console", *MEMBER_FOLDERS)
"""Folders a command line lives in: read for declarations, searched for a members folder."""
ROOT_FOLDERS: Final = ("src/commands", "commands", "cmd", "cli")
"""A source tree's command folders outside any Python package (Rust's ``src/commands``, Go's
``cmd``)."""
SOURCE_SUFFIXES: Final = (".py", ".rs", ".go", ".js", ".ts")
NOT_SUBCOMMANDS: Final = frozenset(
    {"__init__", "__main__", "base", "common", "helpers", "mod", "root", "util", "utils"}
)
"""Module names of a commands folder that are its plumbing, not a subcommand."""
MAX_SEARCH_DEPTH: Final = 2
"""Folders below a package searched for its commands folder (tox's ``session/cmd``): deeper
is internals, and every level costs a listing per folder."""
MAX_DECORATOR_LINES: Final = 12
"""Lines between a ``@group.command()`` decorator and its ``def`` (stacked option decorators)."""

SUBCOMMAND: Final = re.compile(r"^[a-z][a-z0-9_-]{1,39}$")
"""A subcommand as typed: lower case, words joined (``run-parallel``, ``list_templates``)."""
_DECLARED = re.compile(
    r"""(?:\badd_parser|\badd_command|\.command|\.group|Command::new|SubCommand::with_name)"""
    r"""\(\s*(?:name\s*=\s*)?["']([\w:-]{2,40})["']"""
    r"""|\bUse:\s*["']([\w-]{2,40})""",
)
_CLASS_NAME = re.compile(
    r"""^[ \t]+name[ \t]*(?::[^=\n]*)?=[ \t]*["']([a-z][\w-]{1,39})["']""", re.M
)
"""A cleo command class's ``name = "export"``: read only in a command module (elsewhere a
class's ``name`` is anything: click's ``Path`` type is ``name = "path"``)."""
_DECORATOR = re.compile(r"^[ \t]*@[\w.]+\.(?:command|group)\(([^\n]*)")
_TOP_LEVEL_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.M)
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z]\w*)")
_COMMAND_LIST = re.compile(r"^[A-Z_]*COMMANDS[ \t]*(?::[^=\n]*)?=[ \t]*[\[(]([^\])]{0,8000})", re.M)
_QUOTED = re.compile(r"""["']([a-z][\w-]{1,39})(?:[ "'])""")


def _decorated(text: str) -> list[str]:
    """``@cli.command()`` over ``def worker(`` -> ``worker``; a decorator naming it (a quoted
    first argument or ``name=``) is read by ``_DECLARED`` instead."""
    lines = text.splitlines()
    names = []
    for i, line in enumerate(lines):
        decorator = _DECORATOR.match(line)
        if decorator is None or re.match(r"""\s*(?:name\s*=\s*)?["']""", decorator.group(1)):
            continue
        for later in lines[i + 1 : i + 1 + MAX_DECORATOR_LINES]:
            if function := _DEF.match(later):
                names.append(function.group(1).replace("_", "-"))
                break
    return names


def declared_subcommands(text: str, path: str) -> list[str]:
    """The subcommand names one CLI file declares, in file order."""
    names = [next(g for g in m.groups() if g) for m in _DECLARED.finditer(text)]
    names += _decorated(text)
    for block in _COMMAND_LIST.findall(text):
        names += [quoted.split()[0] for quoted in _QUOTED.findall(block + " ")]
    if "command" in path.rsplit("/", 1)[-1]:
        names += _CLASS_NAME.findall(text)
    if path.rsplit("/", 1)[-1] in FUNCTION_MODULES:
        names += [n for n in _TOP_LEVEL_DEF.findall(text) if not n.startswith("_")]
    return [n.split(":")[-1] for n in names]


def member_names(entries: Iterable[str]) -> list[str]:
    """``autoupdate.py`` -> ``autoupdate``, ``debug_files/`` -> ``debug-files``, ``exec_.py`` ->
    ``exec``: a commands folder's members, plumbing and private ones left out."""
    names = []
    for entry in entries:
        stem = entry.rstrip("/")
        if not entry.endswith("/"):
            if not stem.endswith(SOURCE_SUFFIXES):
                continue
            stem = stem.rsplit(".", 1)[0]
        if stem in NOT_SUBCOMMANDS or stem.startswith(("_", ".", "test")) or stem.endswith("_test"):
            continue
        names.append(stem.strip("_").replace("_", "-"))
    return names


def module_paths(target: str, src_layout: bool) -> list[str]:
    """``pre_commit.main`` -> where that module's file may be, under ``src/`` first in a src
    layout."""
    base = target.strip(".").replace(".", "/")
    prefixes = ("src/", "") if src_layout else ("", "src/")
    return [f"{prefix}{base}{suffix}" for prefix in prefixes for suffix in (".py", "/__init__.py")]


def read_subcommands(
    full_name: str,
    read: Reader,
    listdir: Lister,
    packages: list[str],
    entry_modules: list[str],
    root: list[str],
    notes: list[str],
) -> list[str]:
    """The subcommands the repository declares: in the modules its console scripts point at
    (``entry_modules``: ``pre_commit.main``), then in its packages' (``packages``: ``celery``,
    ``src/tox``) CLI files and commands folders, then in a source tree's command folders outside
    a package (``root``: the root listing); each once, at most ``MAX_SUBCOMMANDS``."""
    reads = ReadBudget(
        full_name,
        read,
        listdir,
        notes,
        limit=MAX_SUBCOMMAND_FILE_READS,
        max_bytes=MAX_VOCABULARY_FILE_BYTES,
        what="subcommands",
    )
    found: dict[str, None] = {}

    def add(names: Iterable[str]) -> None:
        for name in names:
            if SUBCOMMAND.match(name) and len(found) < MAX_SUBCOMMANDS:
                found.setdefault(name)

    for module in entry_modules:
        for path in module_paths(module, "src/" in root):
            text = reads.read(path)
            if text is not None:
                add(declared_subcommands(text, path))
                break
    # (folder, depth): a package at depth 0, a folder beneath it deeper; a source tree's command
    # folder outside any package at depth -1 (never searched beneath)
    folders: deque[tuple[str, int]] = deque((p.strip("/"), 0) for p in packages)
    folders.extend((f, -1) for f in ROOT_FOLDERS if f.split("/")[0] + "/" in root)
    members_seen = False
    while folders and reads.left > 0 and len(found) < MAX_SUBCOMMANDS:
        folder, depth = folders.popleft()
        name = folder.rsplit("/", 1)[-1]
        if depth > 0 and members_seen and name not in CLI_FOLDERS:
            continue  # queued before a commands folder was found: no read spent on it
        entries = reads.listdir(folder)
        top_cli = depth == 1 and name == "cli"  # prefect's ``cli/deployment.py``; deeper (tox's
        # ``config/cli``) a cli folder is one component's parser
        if (depth > 0 and name in MEMBER_FOLDERS) or top_cli or (depth < 0 and name == "commands"):
            members = member_names(entries)
            add(members)
            members_seen = members_seen or bool(members)
        declares = depth != 0 and name in CLI_FOLDERS and name not in MEMBER_FOLDERS
        for entry in entries:  # a cli folder's package file too (a click group's home)
            if entry in CLI_MODULES or (declares and entry == "__init__.py"):
                text = reads.read(f"{folder}/{entry}")
                if text is not None:
                    add(declared_subcommands(text, entry))
        if depth < 0 or depth >= MAX_SEARCH_DEPTH:
            continue
        for entry in entries:
            sub = entry.rstrip("/")
            if not entry.endswith("/") or sub.startswith(("_", ".", "test")):
                continue
            if sub in CLI_FOLDERS:  # where a command line lives: searched first
                folders.appendleft((f"{folder}/{sub}", depth + 1))
            elif not members_seen:  # elsewhere only while no commands folder was found
                folders.append((f"{folder}/{sub}", depth + 1))
    if folders and reads.left <= 0:
        reads.note_stopped()
    return list(found)[:MAX_SUBCOMMANDS]
