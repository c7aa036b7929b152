"""The one job: every phase asset of one ticket partition, in lineage order.

Each run carries ``veranda/ticket-run``, the key the ``QueuedRunCoordinator`` limits in
``dagster.yaml``, so at most N ticket runs execute at once however many tickets arrive.
"""

from __future__ import annotations

import dagster as dg

from veranda_dagster.assets._policy import PHASES, PIPELINE_GROUP
from veranda_dagster.partitions import TICKET_JOB

TICKET_RUN_TAG = "veranda/ticket-run"
"""Run tag limited by ``tag_concurrency_limits`` in dagster.yaml."""

RUN_MAX_RUNTIME_S = int(sum(spec.timeout_s for spec in PHASES.values()))
"""A run's wall-clock bound (``dagster/max_runtime``, enforced by run monitoring): the sum of
every phase's own timeout. Real runs use a fraction of each; one that spends this long has
stopped making progress, and a person should look at it rather than a bigger budget."""

ticket_run = dg.define_asset_job(
    TICKET_JOB,
    selection=dg.AssetSelection.groups(PIPELINE_GROUP),
    tags={TICKET_RUN_TAG: "true", "dagster/max_runtime": str(RUN_MAX_RUNTIME_S)},
    description="One ticket, end to end: intake, context, red tests, patch, PR, review, CI.",
)
