"""The last sweep's outcome, kept beside the workspaces for the ops server's ``/metrics``.

The sweep runs in the daemon's sensor process and ``/metrics`` is served by another (the ops
server; under the K8s launcher every run is its own pod), so the numbers travel through a small
JSON file the sweep replaces atomically: the workspaces' size, the bound, whether only
protected clones are left over it, and the evictions so far by reason.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from veranda_dagster.domain.clone.workspace_eviction import SweepPlan

SWEEP_RECORD = "_sweep.json"


class SweepRecord(BaseModel):
    total_bytes: int = 0
    bound_bytes: int = 0
    over_bound: bool = False
    evictions: dict[str, int] = Field(default_factory=dict)
    """Clones removed so far, by reason (``closed``, ``age``, ``size``), and shared stores no
    clone borrowed from (``store``)."""
    at: float = 0.0


def read_sweep_record(root: str | Path) -> SweepRecord | None:
    """The last record, or ``None`` when no sweep has run (or the file is not one)."""
    try:
        return SweepRecord.model_validate_json((Path(root) / SWEEP_RECORD).read_bytes())
    except (OSError, ValidationError):
        return None


def write_sweep_record(root: str | Path, plan: SweepPlan, bound: int, now: float) -> SweepRecord:
    """Add ``plan``'s evictions to the running counts and replace the record."""
    before = read_sweep_record(root) or SweepRecord()
    counts = dict(before.evictions)
    for eviction in plan.evict:
        counts[eviction.reason] = counts.get(eviction.reason, 0) + 1
    if plan.evict_stores:
        counts["store"] = counts.get("store", 0) + len(plan.evict_stores)
    record = SweepRecord(
        total_bytes=plan.total_bytes,
        bound_bytes=bound,
        over_bound=plan.over_bound,
        evictions=counts,
        at=now,
    )
    path = Path(root) / SWEEP_RECORD
    staged = path.with_suffix(".json.new")
    staged.write_text(json.dumps(record.model_dump()))
    os.replace(staged, path)
    return record
