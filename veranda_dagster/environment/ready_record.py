"""The ready record of an environment folder (``READY_FILE``): written last by the setup step,
read back by every later ticket that finds the folder cached.

The folder is the one place the repository's setup script may write (``$VERANDA_ENV``), so
what sits at the record's name when the script ends is the script's choice: a link to a file
of the host's (which a plain write would follow and overwrite), a FIFO (which a plain write
or read would wait on for ever), a link to ``/dev/zero`` (which a plain read would never
finish). The record is therefore written as a new regular file in place of whatever is there,
and read back only as a regular file, without following a link, within ``MAX_READY_BYTES``.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from veranda_dagster.domain.clone.active_environment import READY_FILE, fitting_pointer
from veranda_dagster.domain.core.bounds import MAX_REPO_FILE_BYTES
from veranda_dagster.domain.core.models import SetupOutcome

MAX_READY_BYTES: Final = 4 * MAX_REPO_FILE_BYTES
"""A record is its declared commands (one declaration file, at most ``MAX_REPO_FILE_BYTES``),
the output tail and the refusals kept (some kilobytes each) and a few short fields: well
under this. A longer one is not the product's record and is not read further."""


def write_ready(folder: Path, outcome: SetupOutcome) -> None:
    """``outcome`` as ``folder``'s ready record, a new regular file: an entry the setup script
    left at that name (a link, a FIFO, a folder) is removed first, never written through. The
    record is cut as the pointer is (``fitting_pointer``): the commands are the repository's
    and escape to several times their length in JSON, and a record past ``MAX_READY_BYTES``
    would read as "not ready" and run the setup again on every ticket."""
    path = folder / READY_FILE
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(fitting_pointer(outcome).model_dump_json())


def read_ready(folder: Path) -> SetupOutcome | None:
    """``folder``'s ready record, or ``None`` when there is none the product could have
    written: absent, not a regular file (a link is not followed), over ``MAX_READY_BYTES``,
    or not an outcome. ``None`` means the folder is not ready: the setup runs again."""
    try:
        fd = os.open(folder / READY_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = handle.read(MAX_READY_BYTES + 1)
    if len(raw) > MAX_READY_BYTES:
        return None
    try:
        return SetupOutcome.model_validate_json(raw)
    except ValidationError:
        return None
