"""The ticket's title on its runs (tag ``veranda/title``), so the runs list says what each run
is about instead of a bare ``ENG-101``.

Sensors know only the ticket's key; the title arrives with the ``ticket`` phase, which every
ticket run materializes first, so the shell tags the run then. A run that starts later in the
chain (a re-execution from failure, a backfill of ``patch``) copies the tag from an earlier
run of the same ticket. The title is the ticket author's text: one line, scrubbed, bounded.
"""

from __future__ import annotations

import dagster as dg

from veranda_dagster.domain.core.redaction import scrub
from veranda_dagster.partitions import TICKET_TAG

TITLE_TAG = "veranda/title"
MAX_TITLE_TAG_CHARS = 100
"""A title longer than this is cut: a tag is a label in a list, not the ticket."""
EARLIER_RUNS_LOOKED_AT = 5
"""Earlier runs of the ticket a later run looks at for its title (newest first)."""


def title_tag(title: str) -> str:
    line = " ".join(scrub(title).split())
    return line if len(line) <= MAX_TITLE_TAG_CHARS else line[: MAX_TITLE_TAG_CHARS - 1] + "…"


def tag_run_title(instance: dg.DagsterInstance, run: dg.DagsterRun, title: str) -> None:
    """Tag ``run`` with the ticket's title (the ``ticket`` phase knows it)."""
    shown = title_tag(title)
    if shown and run.tags.get(TITLE_TAG) != shown:
        instance.add_run_tags(run.run_id, {TITLE_TAG: shown})


def copy_run_title(instance: dg.DagsterInstance, run: dg.DagsterRun, key: str) -> None:
    """Give a run without the title tag the one an earlier run of ticket ``key`` carries."""
    if run.tags.get(TITLE_TAG):
        return
    records = instance.get_run_records(
        filters=dg.RunsFilter(tags={TICKET_TAG: key}), limit=EARLIER_RUNS_LOOKED_AT
    )
    for record in records:
        title = record.dagster_run.tags.get(TITLE_TAG)
        if title and record.dagster_run.run_id != run.run_id:
            instance.add_run_tags(run.run_id, {TITLE_TAG: title})
            return
