"""The one grammar of a ticket key, checked before anything touches the file system.

A key names a Dagster partition, a clone folder, a scratch folder and a branch, so it must be
safe as all of them. It is one of three shapes, whole-string matched (Python's ``$`` also
matches before a trailing newline), with no control characters, no path separators, no ``..``
and at most ``MAX_TICKET_KEY_CHARS``:

- an unqualified tracker identifier, ``ENG-123``: the default tracker's keys, kept bare so the
  partitions made before keys were qualified keep working;
- a source-qualified tracker identifier, ``<source>-PAY-17``, for every other tracker whose own
  keys have that shape, so two trackers' ``PAY-17`` never share a partition;
- a source-qualified chat thread, ``<source>-<channel id>-<thread timestamp>``.

Which source owns which keys is the source's business (``ticket_source.TicketSource.owns``);
this grammar only decides what is safe to be a key at all.
"""

from __future__ import annotations

import re
from pathlib import Path

from veranda_dagster.domain.core.bounds import MAX_TICKET_KEY_CHARS
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import SOURCE_NAME_PATTERN

SOURCE_NAME = re.compile(SOURCE_NAME_PATTERN)
"""A source's name as it qualifies keys and fills ``Ticket.source``: lowercase, so a qualified
key never looks like an unqualified one."""

TRACKER_KEY = re.compile(r"[A-Z][A-Z0-9]{0,9}-[0-9]{1,9}")
"""An unqualified tracker identifier: a team or project prefix and a number (``ENG-123``)."""

QUALIFIED_TRACKER_KEY = re.compile(rf"{SOURCE_NAME.pattern}-[A-Z][A-Z0-9_]{{0,254}}-[0-9]{{1,12}}")
"""A tracker identifier qualified by its source (``<source>-PAY-17``)."""

THREAD_KEY = re.compile(rf"{SOURCE_NAME.pattern}-[A-Z0-9]{{5,20}}-[0-9]{{6,12}}\.[0-9]{{1,9}}")
"""A chat thread qualified by its source: ``<source>-<channel id>-<thread timestamp>``."""


class InvalidTicketKeyError(InputError):
    """A ticket key outside the grammar; the message shows it escaped, never raw."""


def is_ticket_key(key: object) -> bool:
    """``ENG-123``, ``<source>-PAY-17`` or ``<source>-C0123ABCD-1712345678.000100``, exactly
    (no trailing newline)."""
    return (
        isinstance(key, str)
        and len(key) <= MAX_TICKET_KEY_CHARS
        and any(g.fullmatch(key) for g in (TRACKER_KEY, QUALIFIED_TRACKER_KEY, THREAD_KEY))
    )


def require_ticket_key(key: object) -> str:
    if not is_ticket_key(key):
        shown = repr(key)[: MAX_TICKET_KEY_CHARS + 2]
        raise InvalidTicketKeyError(
            f"{shown} is not a ticket key (ENG-123, <source>-ABC-123 or "
            f"<source>-<channel>-<ts>, at most {MAX_TICKET_KEY_CHARS} characters)"
        )
    return str(key)


def ticket_dir(root: str | Path, key: str) -> Path:
    """``root/<key>`` for a valid key, and never anywhere outside ``root``."""
    base = Path(root)
    path = base / require_ticket_key(key)
    resolved, inside = path.resolve(), base.resolve()
    if resolved.parent != inside:
        raise InvalidTicketKeyError(f"ticket folder {resolved} is not directly under {inside}")
    return path
