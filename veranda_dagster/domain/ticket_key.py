"""The one grammar of a ticket key, checked before anything touches the file system.

A key names a Dagster partition, a clone folder, a scratch folder and a branch, so it must be
safe as all of them: ``ENG-123`` (a Linear identifier) or ``slack-<channel>-<ts>`` (a Slack
thread), whole-string matched (Python's ``$`` also matches before a trailing newline), no
control characters, no path separators, no ``..``, at most ``MAX_TICKET_KEY_CHARS``.
"""

from __future__ import annotations

import re
from pathlib import Path

from veranda_dagster.domain.bounds import MAX_TICKET_KEY_CHARS
from veranda_dagster.domain.errors import InputError

LINEAR_KEY = re.compile(r"[A-Z][A-Z0-9]{0,9}-[0-9]{1,9}")
SLACK_KEY = re.compile(r"slack-[A-Z0-9]{5,20}-[0-9]{6,12}\.[0-9]{1,9}")
QUALIFIED_KEY = re.compile(r"jira-[A-Z][A-Z0-9_]{0,254}-[0-9]{1,12}")
"""A source-qualified key (``jira-PAY-17``) for a source whose own keys look like Linear's."""


class InvalidTicketKeyError(InputError):
    """A ticket key outside the grammar; the message shows it escaped, never raw."""


def is_ticket_key(key: object) -> bool:
    """``ENG-123``, ``slack-C0123ABCD-1712345678.000100`` or ``jira-PAY-17``, exactly (no
    trailing newline)."""
    return (
        isinstance(key, str)
        and len(key) <= MAX_TICKET_KEY_CHARS
        and bool(
            LINEAR_KEY.fullmatch(key) or SLACK_KEY.fullmatch(key) or QUALIFIED_KEY.fullmatch(key)
        )
    )


def require_ticket_key(key: object) -> str:
    if not is_ticket_key(key):
        shown = repr(key)[: MAX_TICKET_KEY_CHARS + 2]
        raise InvalidTicketKeyError(
            f"{shown} is not a ticket key (ENG-123 or slack-<channel>-<ts>, "
            f"at most {MAX_TICKET_KEY_CHARS} characters)"
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
