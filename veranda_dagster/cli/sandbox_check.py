"""The check every command that starts the product makes first: a working sandbox, or a stop.

``veranda dev`` and ``veranda demo`` run a repository's tests and a coding agent; on a machine
where bubblewrap cannot start they refuse before any fake, folder or process is made, with one
line naming how to get it, instead of running hostile code next to the worker's secrets.
"""

from __future__ import annotations

from veranda_dagster.sandbox import SandboxError, require_sandbox


def refuse_without_sandbox() -> None:
    """Raise ``SandboxError`` (the CLI prints it as one line, exit 2) when nothing would run
    sandboxed and ``VERANDA_SANDBOX=off`` was not chosen explicitly."""
    refusal = require_sandbox()
    if refusal is not None:
        raise SandboxError(refusal)
