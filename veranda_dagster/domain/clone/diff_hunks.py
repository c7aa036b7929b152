"""Which lines a commit added, read from ``git diff -U0 <base>...HEAD``.

A static-analysis repair may only touch what this change introduced: a violation on a line the
commit did not add belongs to someone else and must not be "fixed" on their behalf. Three dots
diff from the merge-base, so the base branch's own later commits are not counted as ours.
"""

from __future__ import annotations

import re

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@")


def _target_path(line: str) -> str | None:
    target = line[4:].rstrip("\n").split("\t", 1)[0]
    if target == "/dev/null":
        return None
    if target.startswith('"') and target.endswith('"'):
        target = target[1:-1].encode().decode("unicode_escape")
    return target[2:] if target.startswith("b/") else target


def changed_lines(unified_diff: str) -> dict[str, set[int]]:
    """``path -> new-side line numbers added or modified``; deletion-only hunks add nothing and
    deleted files do not appear. Paths are repo-relative (the ``b/`` prefix removed)."""
    out: dict[str, set[int]] = {}
    path: str | None = None
    for line in unified_diff.splitlines():
        if line.startswith("+++ "):
            path = _target_path(line)
            if path is not None:
                out.setdefault(path, set())
            continue
        if path is None:
            continue
        match = _HUNK.match(line)
        if match:
            start = int(match["start"])
            count = 1 if match["count"] is None else int(match["count"])
            out[path].update(range(start, start + count))
    return {p: lines for p, lines in out.items() if lines}
