"""Metadata a person reads in the Dagster UI: Markdown, tables and links, not flat strings.

Each builder is bounded (``MAX_MD_CHARS``, ``MAX_TABLE_ROWS``) so a large value never bloats
the event log, and each takes text the product already publishes (the PR body it posted, the
review findings, the test output it recorded), which the phases scrub before storing.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

from veranda_dagster.domain.core.models import CommandResult, PackFile, ReviewRound

MAX_MD_CHARS = 4_000
"""A Markdown value is cut here (a PR body, a test log tail): the full text is in the store."""
MAX_TABLE_ROWS = 50
"""Rows of a table value (the pack's files): the pack's own bound is below this."""


def bounded_md(text: str) -> dg.MetadataValue:
    if len(text) > MAX_MD_CHARS:
        text = text[:MAX_MD_CHARS] + "\n\n… (cut; the whole value is in the store)"
    return dg.MetadataValue.md(text)


def fenced(text: str) -> str:
    """``text`` in a code fence that no backtick run inside it can close."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"


def command_md(run: CommandResult) -> dg.MetadataValue:
    exit_text = "timed out" if run.timed_out else f"exit {run.exit_code}"
    head = f"`{run.command}` — {exit_text}, {run.duration_s:.1f} s\n\n"
    tail = run.output_tail[-(MAX_MD_CHARS - len(head) - 20) :]
    return bounded_md(head + (fenced(tail) if tail.strip() else "(no output)"))


def review_md(rounds: Iterable[ReviewRound]) -> dg.MetadataValue:
    lines = ["| round | findings | fixed | usd |", "|---|---|---|---|"]
    for r in rounds:
        found = "<br>".join(f.replace("|", "\\|").replace("\n", " ") for f in r.findings)
        lines.append(
            f"| {r.index} | {found or 'none'} | {'yes' if r.fixed else 'no'} | {r.usd:.4f} |"
        )
    return bounded_md("\n".join(lines))


PACK_SCHEMA = dg.TableSchema(
    columns=[
        dg.TableColumn("path", "string"),
        dg.TableColumn("windows", "int"),
        dg.TableColumn("lines", "int"),
        dg.TableColumn("bytes", "int"),
    ]
)


def pack_table(files: Iterable[PackFile]) -> dg.MetadataValue:
    rows = [
        dg.TableRecord(
            {
                "path": f.path,
                "windows": len(f.windows),
                "lines": sum(w.end - w.start + 1 for w in f.windows),
                "bytes": sum(len(w.text.encode()) for w in f.windows),
            }
        )
        for f in list(files)[:MAX_TABLE_ROWS]
    ]
    return dg.MetadataValue.table(rows, schema=PACK_SCHEMA)
