"""Files from the repository are data: read and written only inside the clone, only as regular
files, only up to a size.

A repository controls its tree, so ``.veranda/hints.md`` can be a symlink to
``/proc/self/environ``, ``CLAUDE.md`` a symlink to a file outside the clone, and ``Makefile``
a link to ``/dev/zero``. Every read the product makes of the clone (facts, hints, instruction
files, MCP configs) goes through ``RepoFiles``: the path is resolved and must land inside the
clone (a link between two files of the clone is fine), the final open refuses a symlink
(``O_NOFOLLOW``) and never blocks on a FIFO (``O_NONBLOCK``), only a regular file is read, and
at most ``MAX_REPO_FILE_BYTES`` of it. A refusal is recorded (``refused``) for the pack and is
never fatal: the file is simply treated as absent.

Writes (the instruction block, MCP configs) follow the same rule: a link inside the clone is
followed to its target, which is written as a regular file; a link leaving the clone, a
directory or a device is refused.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from veranda_dagster.domain.core.bounds import MAX_REPO_FILE_BYTES

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class RepoFiles:
    """Reads and writes inside one clone; ``refused`` lists what it would not touch, and why."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(os.path.realpath(root))
        self.refused: list[str] = []

    def _refuse(self, rel: str, reason: str) -> None:
        note = f"{rel}: {reason}"
        if note not in self.refused:
            self.refused.append(note)

    def rel(self, path: str | Path) -> str:
        """``path`` (absolute under the clone, or relative to it) as a clone-relative string."""
        p = Path(path)
        if p.is_absolute():
            try:
                return str(p.relative_to(self.root))
            except ValueError:
                return str(Path(os.path.abspath(p)).relative_to(self.root))
        return str(p)

    def resolve(self, path: str | Path) -> Path | None:
        """Where ``path`` really is, when that is inside the clone; ``None`` (refused) when a
        link takes it outside."""
        rel = self.rel(path)
        real = Path(os.path.realpath(self.root / rel))
        if real != self.root and self.root not in real.parents:
            self._refuse(rel, "a link that leaves the clone")
            return None
        return real

    def read_text(self, path: str | Path, max_bytes: int = MAX_REPO_FILE_BYTES) -> str | None:
        """The file's text, or ``None`` when it is absent or refused (link out, not a regular
        file, over ``max_bytes``: a half-read config file would be misread)."""
        rel = self.rel(path)
        if not os.path.lexists(self.root / rel):
            return None
        real = self.resolve(rel)
        if real is None:
            return None
        try:
            fd = os.open(real, _READ_FLAGS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            reason = "a symlink" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror})"
            self._refuse(rel, reason)
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self._refuse(rel, "not a regular file")
                return None
            data = os.read(fd, max_bytes + 1)
        finally:
            os.close(fd)
        if len(data) > max_bytes:
            self._refuse(rel, f"larger than {max_bytes} bytes")
            return None
        return data.decode("utf-8", errors="replace")

    def is_file(self, path: str | Path) -> bool:
        """A regular file inside the clone (no probing through links that leave it)."""
        rel = self.rel(path)
        real = Path(os.path.realpath(self.root / rel))
        if real != self.root and self.root not in real.parents:
            return False
        return real.is_file()

    def write_text(self, path: str | Path, text: str) -> str | None:
        """Write ``text`` as a regular file inside the clone; returns the clone-relative path
        actually written (a link's target inside the clone), or ``None`` when refused."""
        rel = self.rel(path)
        real = self.resolve(rel)
        if real is None:
            return None
        parent = real.parent
        for ancestor in [parent, *parent.parents]:
            if ancestor == self.root:
                break
            if ancestor.is_symlink() or (ancestor.exists() and not ancestor.is_dir()):
                self._refuse(rel, f"its folder {ancestor.relative_to(self.root)} is not a folder")
                return None
        if real.exists() and not real.is_file():
            self._refuse(rel, "not a regular file")
            return None
        parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(real, _WRITE_FLAGS, 0o644)
        except OSError as exc:
            self._refuse(rel, f"not writable ({exc.strerror})")
            return None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        return str(real.relative_to(self.root))
