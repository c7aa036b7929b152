"""The one job: every phase asset of one ticket partition, in lineage order.

Each run carries ``veranda/ticket-run``, the key the ``QueuedRunCoordinator`` limits in
``dagster.yaml``, so at most N ticket runs execute at once however many tickets arrive.
"""

from __future__ import annotations

import dagster as dg

from veranda_dagster.partitions import TICKET_JOB, TICKETS

TICKET_RUN_TAG = "veranda/ticket-run"
"""Run tag limited by ``tag_concurrency_limits`` in dagster.yaml."""

ticket_run = dg.define_asset_job(
    TICKET_JOB,
    selection=dg.AssetSelection.groups("intake", "context", "build", "deliver"),
    partitions_def=TICKETS,
    tags={TICKET_RUN_TAG: "true"},
    description="One ticket, end to end: intake, context, red tests, patch, PR, review, CI.",
)
