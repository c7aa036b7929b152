"""Where the tests find the pinned Claude Code: one answer for every test that runs it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKOUT_CLAUDE = REPO / ".veranda/npm/node_modules/.bin/claude"
"""Where ``.ci/run`` installs the pinned Claude Code in the checkout."""


def pinned_claude() -> Path:
    """``$VERANDA_CLAUDE_BIN``, else ``.ci/run``'s install in the checkout, else ``claude`` on
    ``PATH`` (the image installs it globally); the checkout's path when none exists, so a skip
    or failure names where it was looked for."""
    named = os.environ.get("VERANDA_CLAUDE_BIN")
    if named:
        return Path(named)
    if CHECKOUT_CLAUDE.exists():
        return CHECKOUT_CLAUDE
    found = shutil.which("claude")
    return Path(found) if found else CHECKOUT_CLAUDE
