"""The shipped Dagster instance settings as data, so ``veranda dev`` and the demo run under the
same bounds as the ``dagster.yaml`` at the repository root (a test holds the two equal).

The repository's ``dagster.yaml`` is not in the wheel or the image, so the simulation cannot
copy it; it writes this instead, and says in its banner each value it changed
(``instance_differences``), so "the same bounds hold" is checked rather than promised.
"""

from __future__ import annotations

from typing import Any

from veranda_dagster.concurrency import (
    BACKFILL_RUNS_AT_ONCE,
    MAX_CONCURRENT_RUNS,
    POOL_DEFAULT_LIMIT,
    RUNS_PER_TICKET,
    TICKET_RUNS_AT_ONCE,
)
from veranda_dagster.jobs import RUN_MAX_RUNTIME_S, TICKET_RUN_TAG
from veranda_dagster.partitions import TICKET_TAG

DEQUEUE_INTERVAL_S = 1
"""The queue is looked at every second (Dagster's default is 5 s, on every ticket's path)."""
MAX_RUN_RETRIES = 2
"""A run whose worker died is retried from its failed step at most this many times."""
RUN_START_TIMEOUT_S = 180
"""A launched run that has not started in three minutes is marked failed by run monitoring
(a worker that never came up); a run starts in seconds on a healthy deployment."""
RUN_CANCEL_TIMEOUT_S = 180
"""A canceled run that has not stopped in three minutes is marked canceled anyway: each phase
kills its CLI and commands within seconds of the stop."""
RUN_MONITOR_POLL_S = 120
INSTANCE_MODULE = "veranda_dagster.instance"
INSTANCE_CLASS = "VerandaInstance"
"""Dagster's instance remembering that a ticket partition exists (``instance.py``); named, not
imported, so this module stays free of Dagster."""


def _per_ticket(key: str) -> dict[str, Any]:
    return {"key": key, "value": {"applyLimitPerUniqueValue": True}, "limit": RUNS_PER_TICKET}


def shipped_instance(pool_limit: int = POOL_DEFAULT_LIMIT) -> dict[str, Any]:
    """The instance configuration ``dagster.yaml`` ships (storage left to Dagster's default:
    SQLite under ``$DAGSTER_HOME``), with the pools' default limit as a parameter."""
    return {
        "instance_class": {"module": INSTANCE_MODULE, "class": INSTANCE_CLASS},
        "run_coordinator": {
            "module": "dagster.core.run_coordinator",
            "class": "QueuedRunCoordinator",
            "config": {"dequeue_interval_seconds": DEQUEUE_INTERVAL_S},
        },
        "concurrency": {
            "pools": {"default_limit": pool_limit},
            "runs": {
                "max_concurrent_runs": MAX_CONCURRENT_RUNS,
                "tag_concurrency_limits": [
                    {"key": TICKET_RUN_TAG, "limit": TICKET_RUNS_AT_ONCE},
                    {"key": "dagster/backfill", "limit": BACKFILL_RUNS_AT_ONCE},
                    _per_ticket("dagster/partition"),
                    _per_ticket(TICKET_TAG),
                ],
            },
        },
        "run_retries": {
            "enabled": True,
            "max_retries": MAX_RUN_RETRIES,
            "retry_on_asset_or_op_failure": False,
        },
        "run_monitoring": {
            "enabled": True,
            "max_runtime_seconds": RUN_MAX_RUNTIME_S,
            "start_timeout_seconds": RUN_START_TIMEOUT_S,
            "cancel_timeout_seconds": RUN_CANCEL_TIMEOUT_S,
            "poll_interval_seconds": RUN_MONITOR_POLL_S,
        },
        "telemetry": {"enabled": False},
    }


def instance_differences(actual: Any, shipped: Any, path: str = "") -> list[str]:
    """Each setting where ``actual`` differs from ``shipped``, one ``a.b.c: x (shipped: y)``
    line per leaf, so a banner can say exactly what a local instance changed."""
    if isinstance(actual, dict) and isinstance(shipped, dict):
        out: list[str] = []
        for key in sorted({*actual, *shipped}, key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"{where}: unset (shipped: {shipped[key]!r})")
            elif key not in shipped:
                out.append(f"{where}: {actual[key]!r} (not in the shipped dagster.yaml)")
            else:
                out += instance_differences(actual[key], shipped[key], where)
        return out
    return [] if actual == shipped else [f"{path}: {actual!r} (shipped: {shipped!r})"]
