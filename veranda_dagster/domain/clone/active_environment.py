"""Which prepared environment a clone's commands run with, and how they see it.

The setup step writes a pointer beside the clone (``<workspaces>/.<ticket>.environment.json``),
in the workspace root the sandbox never shows, so neither the repository nor the agent can
point the product's commands at another folder. Every later command in the clone, in whatever
process or phase, reads it: the environment folder is bound read-only at its own path (a venv's
scripts name their interpreter by absolute path) and its ``bin`` folders go first on ``PATH``.

Standard library and pydantic only: ``domain/work/validation.py`` imports this on every run.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from veranda_dagster.domain.core.models import SetupOutcome

READY_FILE: Final = ".veranda-ready.json"
"""Written last into an environment folder: a folder without it is half-made, never used."""
ENV_VAR: Final = "VERANDA_ENV"
"""Inside the sandbox: the environment folder (a setup script installs into it)."""
BIN_DIRS: Final = ("venv/bin", "bin", "node_modules/.bin")
"""Under the environment folder, first on ``PATH`` in this order."""
MAX_POINTER_BYTES: Final = 64 * 1024
"""Of the pointer beside the clone, read back by every command of the ticket. The product
writes it (a setup outcome: its commands, a setup script rarely past a few kilobytes, an
output tail of 8,000 bytes, the kept refusals); a longer one counts as no setup."""


def pointer_path(repo_dir: str | Path) -> Path:
    repo = Path(os.path.realpath(repo_dir))
    return repo.parent / f".{repo.name}.environment.json"


@dataclass(frozen=True)
class ActiveEnvironment:
    env_dir: str
    outcome: SetupOutcome

    def apply(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with the environment's tools first on ``PATH``."""
        bins = [str(Path(self.env_dir) / b) for b in BIN_DIRS if (Path(self.env_dir) / b).is_dir()]
        out = {**env, ENV_VAR: self.env_dir}
        out["PATH"] = os.pathsep.join([*bins, env.get("PATH", "/usr/bin:/bin")])
        venv = Path(self.env_dir) / "venv"
        if (venv / "pyvenv.cfg").is_file():
            out["VIRTUAL_ENV"] = str(venv)
        return out

    @property
    def binds(self) -> dict[str, str]:
        return {self.env_dir: self.env_dir}


OUTPUT_TAIL_IN_POINTER: Final = 2_000
"""Characters of the setup's output tail a cut pointer keeps: its last error line or two."""


POINTER_COMMAND_CHARS: Final = 500
"""Of each command, kept in a pointer that would not fit whole: enough to say which it was."""


def fitting_pointer(outcome: SetupOutcome) -> SetupOutcome:
    """``outcome`` within ``MAX_POINTER_BYTES`` of JSON, so the reader never takes the pointer
    for no setup. The repository declares the commands (a devcontainer's may be any length) and
    the refusals, so a long outcome could outgrow the bound and silently cost the clone its
    environment; what locates the environment (status, folder, key, source) is kept whole, and
    the record of what ran is cut, bulkiest first: the refusals, the output tail, each command
    to ``POINTER_COMMAND_CHARS``, then the commands themselves."""
    cuts = (
        {"refused": outcome.refused[:1]},
        {"output_tail": outcome.output_tail[-OUTPUT_TAIL_IN_POINTER:]},
        {"commands": [c[:POINTER_COMMAND_CHARS] for c in outcome.commands]},
        {"commands": [], "refused": [], "output_tail": ""},
    )
    fitted = outcome
    for cut in cuts:
        if len(fitted.model_dump_json().encode()) <= MAX_POINTER_BYTES:
            break
        fitted = fitted.model_copy(update=cut)
    return fitted


def write_pointer(repo_dir: str | Path, outcome: SetupOutcome) -> None:
    """Write the pointer atomically, cut to fit its reader's bound (``fitting_pointer``)."""
    path = pointer_path(repo_dir)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(fitting_pointer(outcome).model_dump_json())
    tmp.replace(path)


def active_environment(repo_dir: str | Path) -> ActiveEnvironment | None:
    """The environment the setup step prepared for this clone, or ``None`` (no setup ran, it
    prepared nothing, or its folder is gone: the commands then run with the image's tools)."""
    outcome = setup_outcome(repo_dir)
    if outcome is None or not outcome.env_dir:
        return None
    if not (Path(outcome.env_dir) / READY_FILE).is_file():
        return None
    return ActiveEnvironment(outcome.env_dir, outcome)


def setup_outcome(repo_dir: str | Path) -> SetupOutcome | None:
    """What the clone's last setup step recorded, or ``None`` when none ran."""
    path = pointer_path(repo_dir)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_POINTER_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_POINTER_BYTES:
        return None
    try:
        return SetupOutcome.model_validate(json.loads(raw))
    except ValueError:
        return None
