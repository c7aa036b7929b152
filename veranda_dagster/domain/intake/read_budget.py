"""A repository's files read through the forge for the catalog, counted against a named bound.

Every reader of a repository's vocabulary (its manifests, its command line, its configuration
keys, its definitions) reads a hostile repository through a rate-limited forge, so each has a
bound of its own on how many files and listings it may ask for, and a bound on how large a file
it will read. One class keeps that count, so the readers agree on what a read is, what is too
large, and how the catalog's notes say that a bound stopped a reader.
"""

from __future__ import annotations

from collections.abc import Callable

Reader = Callable[[str], str | None]
"""A file of the repository by its path; ``None`` when it is absent."""
Lister = Callable[[str], list[str] | None]
"""A folder's entries (folders end in ``/``); ``None`` when it is absent."""


class ReadBudget:
    """At most ``limit`` forge asks (file reads and folder listings) for one repository. Past
    that, reads give ``None`` and listings ``[]``, and the catalog's notes say once that the
    ``what`` reader stopped; a file over ``max_bytes`` reads as ``None`` with a note naming it."""

    def __init__(
        self,
        full_name: str,
        read: Reader,
        listdir: Lister,
        notes: list[str],
        *,
        limit: int,
        max_bytes: int,
        what: str,
    ) -> None:
        self.full_name, self._read, self._listdir, self.notes = full_name, read, listdir, notes
        self.limit, self.max_bytes, self.what = limit, max_bytes, what
        self.left = limit
        self._stop_noted = False

    def note_stopped(self) -> None:
        """Say (once) that the bound stopped this reader with work left."""
        if not self._stop_noted:
            self.notes.append(
                f"{self.full_name}: stopped reading {self.what} after {self.limit} files"
            )
            self._stop_noted = True

    def _spend(self) -> bool:
        if self.left <= 0:
            self.note_stopped()
            return False
        self.left -= 1
        return True

    def read(self, path: str) -> str | None:
        if not self._spend():
            return None
        text = self._read(path)
        if text is not None and len(text.encode("utf-8", "ignore")) > self.max_bytes:
            self.notes.append(f"{self.full_name}: skipped {path} (over the {self.what} size bound)")
            return None
        return text

    def listdir(self, path: str) -> list[str]:
        return (self._listdir(path) or []) if self._spend() else []
