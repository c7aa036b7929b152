"""Where each running ``veranda dev`` leaves its addresses, and how ``veranda sim`` finds one.

One file per ``veranda dev`` (``<state dir>/<pid>.json``), so a second one neither takes over
the first one's file nor deletes it when it stops. ``veranda sim`` reads the files of the
processes still alive: with one it uses it; with several it picks the one named by ``--ui``,
else the newest, and says which on stderr. An explicit ``--state`` path held by a live
``veranda dev`` is refused with that one's UI URL, never overwritten.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veranda_dagster.domain.core.errors import InputError

STATE_ENV = "VERANDA_DEV_STATE"
"""An explicit state file (``veranda dev`` and ``veranda sim`` both honour it)."""
STATE_DIR_ENV = "VERANDA_DEV_STATE_DIR"
"""The folder of per-process state files (default: ``<tmp>/veranda-dev-<uid>``)."""
MAX_STATE_FILES = 64
"""State files looked at in the folder: more than this many ``veranda dev`` is no dev box."""
MAX_STATE_BYTES = 64_000
"""A state file is a few hundred bytes; a bigger one is not ours and is not read."""


@dataclass(frozen=True)
class RunningDev:
    """One live ``veranda dev``, as its state file describes it."""

    path: Path
    info: dict[str, Any]

    @property
    def ui_url(self) -> str:
        return str(self.info.get("ui_url", "?"))

    @property
    def control_url(self) -> str:
        return str(self.info["control_url"])

    @property
    def pid(self) -> int:
        return int(self.info.get("pid", 0))


def state_dir() -> Path:
    return Path(
        os.environ.get(STATE_DIR_ENV) or Path(tempfile.gettempdir()) / f"veranda-dev-{os.getuid()}"
    )


def own_state_path(explicit: str | None = None) -> Path:
    """This process's state file: ``--state``, else ``$VERANDA_DEV_STATE``, else its own file
    in the state folder (named by its pid, so no other ``veranda dev`` writes it)."""
    chosen = explicit or os.environ.get(STATE_ENV)
    if chosen:
        return Path(chosen)
    return state_dir() / f"{os.getpid()}.json"


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_state(path: Path) -> RunningDev | None:
    """The live ``veranda dev`` that wrote ``path``; ``None`` if none does (absent, unreadable,
    not ours, or its process is gone)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_STATE_BYTES:
            return None
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or "control_url" not in info:
        return None
    dev = RunningDev(path, info)
    return dev if _alive(dev.pid) else None


def running_devs() -> list[RunningDev]:
    """Every live ``veranda dev`` with a file in the state folder, newest first."""
    folder = state_dir()
    try:
        files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    found = [read_state(p) for p in files[:MAX_STATE_FILES]]
    return [dev for dev in found if dev is not None]


def claim(path: Path, info: dict[str, Any]) -> None:
    """Write ``info`` to ``path`` unless a live ``veranda dev`` holds it (then one line)."""
    holder = read_state(path)
    if holder is not None and holder.pid != os.getpid():
        raise InputError(
            f"another veranda dev (pid {holder.pid}) is running with state file {path}: "
            f"its UI is {holder.ui_url}; stop it, or give this one another --state"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info))


def release(path: Path) -> None:
    """Remove ``path`` only if this process wrote it (a refused second dev removes nothing)."""
    holder = read_state(path)
    if holder is not None and holder.pid == os.getpid():
        path.unlink(missing_ok=True)


def find_dev(explicit: str | None = None, ui: str | None = None) -> tuple[RunningDev, str]:
    """The ``veranda dev`` that ``veranda sim`` talks to, and a note saying which when there
    was a choice (empty otherwise)."""
    chosen = explicit or os.environ.get(STATE_ENV)
    if chosen:
        dev = read_state(Path(chosen))
        if dev is None:
            raise InputError(f"no running veranda dev wrote {chosen}; start one: veranda dev")
        return dev, ""
    devs = running_devs()
    if ui:
        devs = [d for d in devs if d.ui_url.rstrip("/") == ui.rstrip("/")]
        if not devs:
            raise InputError(f"no running veranda dev has the UI {ui}")
    if not devs:
        raise InputError(f"no running veranda dev found (in {state_dir()}); start one: veranda dev")
    if len(devs) == 1:
        return devs[0], ""
    others = ", ".join(d.ui_url for d in devs[1:])
    note = (
        f"{len(devs)} veranda dev are running; using the newest, UI {devs[0].ui_url} "
        f"(others: {others}; pick one with --ui URL)"
    )
    return devs[0], note
