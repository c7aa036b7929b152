"""What a failed run tells the person who filed the ticket.

A run that fails leaves its finished phases in the store, so the note says which phase
failed and with what kind of error, that nothing before it is lost or will be paid for again,
and how to rerun from the failure. Only the error's *type* and a scrubbed first line of its
message go out, never a traceback, and every text passes ``redaction.scrub``: a failure
message may quote a URL with a password or a vendor's echo of a key.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from veranda_dagster.domain.core.redaction import scrub

MAX_ERROR_LINE_CHARS = 200
"""The error's first line is cut here: enough to recognise it, too short to carry a dump."""


def failure_detail(message: str) -> str:
    """An error message as one scrubbed line, cut at ``MAX_ERROR_LINE_CHARS``: the root cause
    a person reads (the upstream status and message), never a traceback."""
    line = " ".join(part.strip() for part in scrub(message).splitlines() if part.strip())
    if len(line) > MAX_ERROR_LINE_CHARS:
        line = line[: MAX_ERROR_LINE_CHARS - 1] + "…"
    return line


def failure_headline(phase: str | None, error_type: str, detail: str) -> str:
    """``patch: VendorError: upstream: API Error: 500 …``: where, what kind, and why, in the
    one line the run page shows as the step's failure."""
    head = f"{phase or 'run'}: {error_type}"
    return f"{head}: {detail}" if detail else head


class RunFailure(BaseModel):
    """One failed run of one ticket, as read from the run's events."""

    ticket: str
    run_id: str
    phase: str | None
    """The phase (asset) or check whose step failed; ``None`` when the run itself failed
    (its worker died, it ran past its runtime bound) with no step failure."""
    error_type: str
    error_line: str = ""
    stored_phases: list[str] = Field(default_factory=list)
    """Phases of this ticket whose values are in the store (kept, loaded by a rerun)."""
    ui_url: str | None = None
    """The Dagster UI's base URL, when the deployment names it (``VERANDA_UI_URL``)."""


def failure_note(failure: RunFailure) -> str:
    """The Markdown comment posted on the ticket's channel (a tracker comment or a thread reply)."""
    where = f"phase `{failure.phase}`" if failure.phase else "the run itself (no phase failed)"
    line = failure_detail(failure.error_line)
    parts = [
        f"Veranda's run for {failure.ticket} failed at {where}: `{failure.error_type}`"
        + (f" ({line})" if line else "")
        + "."
    ]
    if failure.stored_phases:
        kept = ", ".join(f"`{p}`" for p in failure.stored_phases)
        parts.append(
            f"Stored phases are kept: {kept}. A rerun loads them instead of recomputing them, "
            "so no model call is repeated for them."
        )
    else:
        parts.append("No phase had finished yet; a rerun starts from the ticket.")
    run_ref = (
        f"[run {failure.run_id[:8]}]({failure.ui_url.rstrip('/')}/runs/{failure.run_id})"
        if failure.ui_url
        else f"run `{failure.run_id}`"
    )
    start = f"`{failure.phase}`" if failure.phase else "the first phase that is not stored"
    parts.append(
        f"To rerun: open {run_ref} in the Dagster UI and choose Re-execute > From failure, "
        f"or materialize {start} and downstream for partition `{failure.ticket}`."
    )
    return scrub("\n\n".join(parts))
