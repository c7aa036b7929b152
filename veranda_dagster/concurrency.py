"""The numbers that bound how much Veranda does at once, and where Dagster enforces each.

Two layers, because they bound different things (docs "Managing concurrency"):

- **Pools** bound *steps* across every run, whoever launched it. A pool is declared on the
  asset (``PhaseSpec.pool``), so a backfill, a materialization from the UI or a re-execution
  claims the same slots as a sensor's ticket run. ``veranda/model`` covers every phase that
  pays for model turns (vendor quotas, the budget); ``veranda/forge`` the phase that writes to
  GitHub without a model (opening the pull request). Their limit is ``pools.default_limit``
  in ``dagster.yaml`` until an operator sets one (``dagster instance concurrency set``).
- **Run queue limits** (``concurrency: runs:``) bound *runs*: how many start at all, how many
  ticket runs, how many backfill runs, and one run per ticket partition, which every
  partitioned run carries (``dagster/partition``) however it was launched.

``dagster.yaml`` and ``deploy/helm/values.yaml`` state these same numbers; a test reads both.
"""

from __future__ import annotations

MODEL_POOL = "veranda/model"
"""Pool of the model-calling phase steps."""
FORGE_POOL = "veranda/forge"
"""Pool of the forge-writing phase steps that call no model."""
FORGE_WRITING_PHASES = frozenset({"pull_request"})
"""Phases without model turns that write to the forge (open the pull request)."""

POOL_DEFAULT_LIMIT = 4
"""Steps of one pool running at once: as many as ticket runs, so the pools only bite when
backfills or UI materializations add runs the ticket-run limit does not see."""
MAX_CONCURRENT_RUNS = 10
"""Runs in progress at once (ticket, feedback, backfill runs together)."""
TICKET_RUNS_AT_ONCE = 4
"""Runs of ``ticket_run`` at once (tag ``veranda/ticket-run``)."""
BACKFILL_RUNS_AT_ONCE = 4
"""Backfill runs at once, over all backfills (tag ``dagster/backfill``, any value): a backfill
of a phase over many tickets queues instead of starting them all."""
RUNS_PER_TICKET = 1
"""Runs of one ticket partition at once, whoever launched them."""
