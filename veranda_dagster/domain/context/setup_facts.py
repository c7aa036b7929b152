"""How a repository declares its own environment: read, never run, by the facts reader.

A worker image cannot hold every repository's tools (Node, Go, Java, private packages), so a
repository says how to prepare itself, the way peers' users already do (Codex's environment
setup script, Copilot's ``copilot-setup-steps.yml``, OpenHands' ``setup.sh``):

1. ``.veranda/setup.sh`` (also ``.openhands/setup.sh``): a shell script run from the root;
2. a devcontainer file (``.devcontainer/devcontainer.json``, ``.devcontainer.json``): its
   ``onCreateCommand``, ``updateContentCommand`` and ``postCreateCommand``, in that order (the
   order the spec runs them), each a string, an argv list or a map of named commands;
3. the operator's hints file for the repository, a line ``setup: <path of a script in the
   repository>`` (an org that cannot commit to the repository still declares it).

The first found wins. Nothing here runs anything: ``environment.setup`` runs it in the sandbox.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.core.documents import json_or_none

SETUP_SCRIPTS = (".veranda/setup.sh", ".openhands/setup.sh")
DEVCONTAINER_FILES = (".devcontainer/devcontainer.json", ".devcontainer.json")
DEVCONTAINER_KEYS = ("onCreateCommand", "updateContentCommand", "postCreateCommand")
MAX_SETUP_COMMANDS = 16
"""Commands kept from one declaration: a devcontainer map with more is not a setup step."""
_HINTS_SETUP = re.compile(r"^[ \t]*setup:[ \t]*(\S+)[ \t]*$", re.MULTILINE)
"""``setup: scripts/bootstrap.sh`` on a line of its own, blanks matched inside the line only:
whitespace matched at a line's start spans the newlines below it, so a hints file of blank
lines was rescanned from every line (20 s for 128 kB of them)."""
_SAFE_PATH = re.compile(r"^[\w][\w./-]*$")


def _commands(value: Any) -> list[str]:
    if isinstance(value, str) and value.strip():
        return [value.strip()]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return [shlex.join(value)]
    if isinstance(value, dict):
        return [c for v in value.values() for c in _commands(v)]
    return []


def _devcontainer(files: RepoFiles, path: str) -> list[str]:
    text = files.read_text(path)
    if not text:
        return []
    # devcontainer.json is JSON with comments; whole-line // comments are the common case
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    data = json_or_none(body)
    if not isinstance(data, dict):
        return []
    return [c for key in DEVCONTAINER_KEYS for c in _commands(data.get(key))]


def hinted_script(hints_text: str) -> str | None:
    """The script an operator's hints file names (``setup: scripts/bootstrap.sh``), if it is a
    plain relative path (no ``..``, no absolute path, no shell syntax)."""
    match = _HINTS_SETUP.search(hints_text or "")
    if not match:
        return None
    path = match.group(1)
    if not _SAFE_PATH.match(path) or ".." in path.split("/"):
        return None
    return path


def setup_declaration(files: RepoFiles, hints_text: str = "") -> tuple[list[str], str]:
    """The setup commands and the file they came from, or ``([], "")``."""
    for script in SETUP_SCRIPTS:
        if files.read_text(script) is not None:
            return [f"sh {shlex.quote(script)}"], script
    for path in DEVCONTAINER_FILES:
        found = _devcontainer(files, path)
        if found:
            return found[:MAX_SETUP_COMMANDS], path
    hinted = hinted_script(hints_text)
    if hinted and files.read_text(hinted) is not None:
        return [f"sh {shlex.quote(hinted)}"], "org hints"
    return [], ""
