"""Progress written on the forge, so a retried step resumes where the last attempt got to.

A step retry re-runs a whole asset. Without a record, review rounds restarted from zero (paying
for every round again) and a feedback round that crashed after its push was done a second time.
The record lives where the work lives: a hidden marker in a bot comment on the PR (one per
review round, one per feedback round's summary) and a trailer on a feedback round's pushed
commit. Markers are read only from comments the forge says our own account wrote and nobody
edited (``Comment.by_self``: by user id, not by text), and a review round's recorded commit must
be on the branch, so a person pasting a marker cannot skip the review or a feedback round.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from veranda_dagster.domain.core.documents import json_or_none
from veranda_dagster.domain.core.forge_port import Comment

MARKER = re.compile(r"<!-- veranda-progress ([a-z_]+) ([A-Za-z0-9+/=]+) -->")
FEEDBACK_TRAILER = "Veranda-Feedback-Round"
MAX_MARKER_FINDINGS = 50
"""Findings carried in one progress marker (a hidden comment the next round reads back):
the marker rides in a posted message, which forges cap at some tens of kilobytes."""
MAX_MARKER_FINDING_CHARS = 500
"""Of one finding in a marker: its line and message, not a log (50 x 500 chars, base64, stays
well under a posted message's cap)."""


def marker(kind: str, payload: dict[str, Any]) -> str:
    data = base64.b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode()
    return f"<!-- veranda-progress {kind} {data} -->"


def read_markers(comments: list[Comment], kind: str) -> list[dict[str, Any]]:
    """Payloads of ``kind`` markers in our own account's comments, oldest first."""
    found: list[dict[str, Any]] = []
    for comment in comments:
        if not comment.by_self:
            continue
        for match in MARKER.finditer(comment.body):
            if match[1] != kind:
                continue
            try:
                raw = base64.b64decode(match[2], validate=True)
            except ValueError:
                continue
            payload = json_or_none(raw)  # a nesting past the decoder is not a payload either
            if isinstance(payload, dict):
                found.append(payload)
    return found


def bounded_findings(findings: list[str]) -> list[str]:
    return [f[:MAX_MARKER_FINDING_CHARS] for f in findings[:MAX_MARKER_FINDINGS]]


def comments_digest(keys: list[str]) -> str:
    """Names one batch of comments (one feedback round), whatever order they were listed in."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:16]
