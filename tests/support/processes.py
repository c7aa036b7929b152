"""Commands run from the repository root, as a user or a deployment runs them."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_in_repo(
    argv: Sequence[str], env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``argv`` in the repository root with exactly ``env``; its text output is captured and a
    non-zero exit is returned, not raised, so a test asserts on the exit and on what it said."""
    return subprocess.run(
        list(argv),
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
