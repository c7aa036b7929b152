"""What a repository that declares no setup gets: its language's ordinary default.

Python: a venv in the environment folder with the project's dependencies and its dev extras
(``[project.optional-dependencies]`` ``dev``/``test``/``tests``/``lint``, PEP 735
``[dependency-groups]`` of the same names, or ``requirements-dev.txt``), installed from the
configured index by the image's own pip (``pip --python``: the venv gets no pip of its own,
which saves seconds and megabytes per environment). The project itself is not installed: the
commands run from the clone's root, and an install would pin the environment to one clone.
Other languages have no default yet; the outcome says so instead of guessing.
"""

from __future__ import annotations

import shlex
from typing import Any, Final

from veranda_dagster.domain.clone.repo_files import RepoFiles
from veranda_dagster.domain.core.documents import toml_or_none

DEV_GROUPS: Final = ("dev", "test", "tests", "lint")
MAX_DEFAULT_REQUIREMENTS: Final = 200
"""Requirement strings taken from one pyproject; more is not a project's dev setup."""
VENV: Final = '"$VERANDA_ENV/venv"'


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def python_requirements(files: RepoFiles) -> tuple[list[str], bool]:
    """Requirement strings from ``pyproject.toml`` and whether a ``requirements-dev.txt`` is
    there to install with ``-r``."""
    text = files.read_text("pyproject.toml") or ""
    data = (toml_or_none(text) or {}) if text else {}
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    assert isinstance(project, dict)
    found = _strings(project.get("dependencies"))
    extras = project.get("optional-dependencies")
    groups = data.get("dependency-groups")
    for table in (extras, groups):
        if isinstance(table, dict):
            for name in DEV_GROUPS:
                found += _strings(table.get(name))
    has_file = files.read_text("requirements-dev.txt") is not None
    return list(dict.fromkeys(found))[:MAX_DEFAULT_REQUIREMENTS], has_file


def python_default(files: RepoFiles) -> list[str]:
    requirements, has_file = python_requirements(files)
    commands = [f"python3 -m venv --without-pip {VENV}"]
    args = [shlex.quote(r) for r in requirements]
    if has_file:
        args += ["-r", "requirements-dev.txt"]
    if args:
        commands.append(f"python3 -m pip --python {VENV}/bin/python install " + " ".join(args))
    return commands
