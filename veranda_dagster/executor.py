"""The executor every run of the phase graph uses: the steps in the run worker's own process.

Dagster's default multiprocess executor *spawns* each step: a fresh interpreter imports Dagster
and the definitions (about 1.4 s) and opens the instance before the step starts, 13 times per
ticket run, which was most of a ticket's wall and five times its CPU. A ``forkserver`` start
method pays the import once per run but still costs a process, an instance and a resource set
per step; measured side by side on the demo it was still twice the in-process wall. So steps
run in process, and what a process per step bought, a phase's hard bound that really ends the
phase, comes from the phase shell instead: at its bound it kills every process the phase
started and stops the phase's thread (``assets/_phase_kill.py``).

The executor is the ``Definitions`` default, so ``ticket_run`` and the implicit asset job that
backfills and UI materializations run on both use it, and so do a Kubernetes run pod
(``dagster api execute_run`` executes the job with its own executor), the daemon's run worker
and the simulation driver behind the demo: the demo measures what production runs. Run config
can still choose ``multiprocess`` (with any start method) for one run.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

STEP_EXECUTION = "in_process"
"""How a run executes its steps when run config does not say."""


def _default_in_process(config: dict[str, Any]) -> dict[str, Any]:
    """``in_process`` for a run whose config names no executor; an explicit choice stands."""
    return dict(config) if config else {STEP_EXECUTION: {}}


phase_executor = dg.multi_or_in_process_executor.configured(
    _default_in_process,
    # no default of its own (Dagster's selector defaults to multiprocess): what the run names
    # is passed on, and checked against Dagster's own schema by the inner executor
    config_schema=dg.Field(
        dg.Permissive(),  # type: ignore[no-untyped-call]  # Dagster's own is unannotated
        is_required=False,
        default_value={},
    ),
    name="veranda_executor",
)
"""``multi_or_in_process_executor`` with ``in_process`` as the default."""
