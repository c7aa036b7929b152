"""A repository's public definitions: the top-level class and function names of its package's
modules, a second and larger index than the names it is known by (``repo_vocabulary``).

A colleague places a ticket that never names a repository by the class or function it writes
as code (`` `permission_classes` ``, `` `RegionInvalidationStrategy` ``), and a package defines
hundreds of them, most never exported from its ``__init__``. They are read here breadth first
from the package's folders, nearest the top first (where its public API lives), skipping
private and test modules, within ``MAX_DEFINITION_FILE_READS`` forge reads of at most
``MAX_DEFINITION_FILE_BYTES`` each, and at most ``MAX_DEFINITION_TERMS`` names are kept. The
text is only matched, never run.
"""

from __future__ import annotations

import re
from collections import deque

from veranda_dagster.domain.core.bounds import (
    MAX_DEFINITION_FILE_BYTES,
    MAX_DEFINITION_FILE_READS,
    MAX_DEFINITION_TERMS,
)
from veranda_dagster.domain.intake.read_budget import Lister, Reader

_TOP_LEVEL = re.compile(r"^(?:class|def|async def)\s+([A-Za-z][A-Za-z0-9_]{0,99})", re.M)
MIN_DEFINITION_CHARS = 4
"""Shorter names (``run``, ``get``) are every package's; a colleague searches for longer ones."""
PRIVATE_PREFIXES = ("_", "test", "conftest", "vendor")
"""Modules and folders that are no public API: private (``_internal``), a test suite, a
vendored copy of another project."""


def is_public_name(name: str) -> bool:
    """A name a colleague could search for: not private, ``MIN_DEFINITION_CHARS`` or longer."""
    return not name.startswith("_") and len(name) >= MIN_DEFINITION_CHARS


def public_top_level_names(text: str) -> list[str]:
    """The public classes and functions a module defines at its top level, in file order."""
    return [name for name in _TOP_LEVEL.findall(text) if is_public_name(name)]


def _public(entry: str) -> bool:
    return not entry.rstrip("/").lower().startswith(PRIVATE_PREFIXES)


def read_definitions(
    full_name: str, read: Reader, listdir: Lister, packages: list[str], notes: list[str]
) -> list[str]:
    """The public top-level names defined in the modules under ``packages`` (folder paths such
    as ``dogpile`` or ``src/httpx``), in reading order, each once, within the bounds."""
    left = MAX_DEFINITION_FILE_READS
    names: dict[str, None] = {}
    folders = deque(p.strip("/") for p in packages)
    modules: deque[str] = deque()
    while left > 0 and (folders or modules) and len(names) < MAX_DEFINITION_TERMS:
        left -= 1
        if modules:  # a folder's own modules before the folders beneath it
            text = read(modules.popleft())
            if text is None or len(text.encode("utf-8", "ignore")) > MAX_DEFINITION_FILE_BYTES:
                continue
            for name in public_top_level_names(text):
                names.setdefault(name)
            continue
        folder = folders.popleft()
        entries = sorted(e for e in listdir(folder) or [] if _public(e))
        modules.extend(f"{folder}/{e}" for e in entries if e.endswith(".py"))
        folders.extend(f"{folder}/{e.rstrip('/')}" for e in entries if e.endswith("/"))
    if left <= 0 and (folders or modules):
        notes.append(
            f"{full_name}: stopped reading definitions after {MAX_DEFINITION_FILE_READS} files"
        )
    return list(names)[:MAX_DEFINITION_TERMS]
