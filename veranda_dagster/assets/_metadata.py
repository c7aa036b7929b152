"""Metadata a person reads in the Dagster UI: Markdown, tables and links, not flat strings.

Each builder is bounded (``MAX_MD_CHARS``, ``MAX_TABLE_ROWS``) so a large value never bloats
the event log, and each takes text the product already publishes (the PR body it posted, the
review findings, the test output it recorded), which the phases scrub before storing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import dagster as dg

from veranda_dagster.domain.core.models import CommandResult, PackFile, ReviewRound

MAX_MD_CHARS = 4_000
"""A Markdown value is cut here (a PR body, a test log tail): the full text is in the store."""
MAX_COMMAND_MD_CHARS = 200
"""The command shown above its output: a repository's configured command can be any length,
and its output's tail is what a person opened the value for."""
MAX_TABLE_ROWS = 50
"""Rows of a table value (the pack's files): the pack's own bound is below this."""


def bounded_md(text: str) -> dg.MetadataValue:
    if len(text) > MAX_MD_CHARS:
        text = text[:MAX_MD_CHARS] + "\n\n… (cut; the whole value is in the store)"
    return dg.MetadataValue.md(text)


_BACKTICK_RUN = re.compile(r"`+")


def fence_for(text: str) -> str:
    """A code fence no backtick run inside ``text`` can close: one backtick longer than the
    longest run, at least three. Found in one pass (growing a fence until ``text`` no longer
    holds it re-reads the text once per backtick of a long run)."""
    longest = max((len(m.group()) for m in _BACKTICK_RUN.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(text: str) -> str:
    """``text`` in a code fence that no backtick run inside it can close."""
    fence = fence_for(text)
    return f"{fence}\n{text.rstrip()}\n{fence}"


def command_md(run: CommandResult) -> dg.MetadataValue:
    """The command, how it ended and the tail of its output, fenced and closed within
    ``MAX_MD_CHARS``: the tail is cut from the front to leave room for the fence its own
    backtick runs require, so ``bounded_md`` never cuts the closing fence off."""
    exit_text = "timed out" if run.timed_out else f"exit {run.exit_code}"
    command = run.command.replace("`", "'")[:MAX_COMMAND_MD_CHARS]
    head = f"`{command}` — {exit_text}, {run.duration_s:.1f} s\n\n"
    room = MAX_MD_CHARS - len(head)
    tail = run.output_tail[-room:]
    if not tail.strip():
        return bounded_md(head + "(no output)")
    fence = fence_for(tail)
    keep = max(0, room - 2 * len(fence) - 2)
    tail = tail[len(tail) - keep :]
    return bounded_md(head + fenced(tail))


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
