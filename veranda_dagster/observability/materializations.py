"""Phase materializations read back from the Dagster instance, as plain records.

Both ``veranda report`` and the ops server's metrics tail read runs as data from here. The
metadata keys are declared in the phase registry (``domain.core.phases``): ``SHARED_METADATA``
(``duration_s``, ``outcome``, ``model_calls``, ``usd``, ``tokens_in``, ``tokens_out``,
``backend``, ``model``, ``tier``, ``reason``, written by ``assets/_shell.py``) plus each
phase's own ``metadata``, such as ``review_rounds``, ``ci_status`` and
``coverage_before_pct``/``coverage_after_pct`` (absent when not measured), which the
replay hooks below read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

import dagster as dg

from veranda_dagster.domain.core import phases
from veranda_dagster.domain.core.bounds import MAX_REPORT_EVENTS
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.phases import MetricHook
from veranda_dagster.observability.metrics import CI_STATUSES, PHASES, PhaseMetrics

PAGE = 500
"""Records fetched per storage query while paging through one phase's materializations."""


@dataclass(frozen=True)
class PhaseRecord:
    phase: str
    partition: str | None
    run_id: str
    timestamp: float
    storage_id: int
    metadata: dict[str, Any] = field(default_factory=dict)

    def num(self, key: str) -> float:
        value = self.metadata.get(key)
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
        )

    def text(self, key: str) -> str:
        value = self.metadata.get(key)
        return str(value) if value is not None else "none"


def _plain(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: getattr(v, "value", v) for k, v in metadata.items()}


def read_phase_records(
    instance: dg.DagsterInstance,
    *,
    since: float | None = None,
    after_storage_id: int | None = None,
    phases: Sequence[str] = PHASES,
    limit: int = MAX_REPORT_EVENTS,
) -> list[PhaseRecord]:
    """Every phase materialization after ``since`` (epoch seconds) / ``after_storage_id``,
    oldest first. More than ``limit`` is an error naming the fix, never a silent truncation
    that would make totals wrong."""
    out: list[PhaseRecord] = []
    for phase in phases:
        for record in _phase_records(instance, phase, since, after_storage_id):
            out.append(record)
            if len(out) > limit:
                raise InputError(
                    f"more than {limit} phase materializations in the window; narrow it with "
                    "--since"
                )
    out.sort(key=lambda r: r.storage_id)
    return out


def _phase_records(
    instance: dg.DagsterInstance, phase: str, since: float | None, after_storage_id: int | None
) -> Iterator[PhaseRecord]:
    flt = dg.AssetRecordsFilter(
        asset_key=dg.AssetKey(phase), after_timestamp=since, after_storage_id=after_storage_id
    )
    cursor: str | None = None
    while True:
        result = instance.fetch_materializations(flt, limit=PAGE, cursor=cursor, ascending=True)
        for rec in result.records:
            mat = rec.asset_materialization
            if mat is None:
                continue
            yield PhaseRecord(
                phase=phase,
                partition=mat.partition,
                run_id=rec.run_id,
                timestamp=rec.timestamp,
                storage_id=rec.storage_id,
                metadata=_plain(dict(mat.metadata)),
            )
        if not result.has_more:
            return
        cursor = result.cursor


def observe_record(metrics: PhaseMetrics, record: PhaseRecord) -> None:
    """Replay one stored materialization into the metrics (the cross-pod path).

    Stored metadata carries totals and the *last* call's vendor, not every call, so a phase
    counts one resolution with its totals; the in-process path counts each call.
    """
    metrics.phase_duration.labels(phase=record.phase).observe(record.num("duration_s"))
    vendor_mode = record.text("backend")  # the stored metadata key keeps its public name
    if vendor_mode != "none" and "/" in vendor_mode:
        vendor, mode = vendor_mode.split("/", 1)
        cached = 0
        metrics.record_call(
            vendor,
            mode,
            record.text("reason"),
            int(record.num("tokens_in")),
            int(record.num("tokens_out")),
            cached,
            record.num("usd"),
        )
    if record.partition:
        metrics.add_task_usd(record.partition, record.num("usd"))
    spec = phases.PHASES.get(record.phase)
    if spec is not None and spec.metric is not None:
        REPLAY_HOOKS[spec.metric](metrics, record)


def _replay_review_iterations(metrics: PhaseMetrics, record: PhaseRecord) -> None:
    if "review_rounds" in record.metadata:
        metrics.review_iterations.observe(record.num("review_rounds"))


def _replay_coverage_delta(metrics: PhaseMetrics, record: PhaseRecord) -> None:
    md = record.metadata
    # ``coverage_*_pct``, present only when measured; older events wrote -1 for "not"
    keys = ("coverage_before_pct", "coverage_after_pct")
    if keys[0] not in md:
        keys = ("coverage_before", "coverage_after")
    before, after = record.num(keys[0]), record.num(keys[1])
    if keys[0] in md and keys[1] in md and before >= 0 and after >= 0:
        metrics.coverage_delta.observe(after - before)


def _replay_ci_result(metrics: PhaseMetrics, record: PhaseRecord) -> None:
    md = record.metadata
    status = record.text("ci_status") if "ci_status" in md else record.text("outcome")
    metrics.ci_results.labels(status=status if status in CI_STATUSES else "other").inc()
    if record.partition:
        metrics.finish_task(record.partition)


REPLAY_HOOKS: dict[MetricHook, Callable[[PhaseMetrics, PhaseRecord], None]] = {
    "review_iterations": _replay_review_iterations,
    "coverage_delta": _replay_coverage_delta,
    "ci_result": _replay_ci_result,
}
"""Each phase spec's ``metric`` hook, replayed from stored metadata (another pod's run)."""
REPLAY_READS: dict[MetricHook, tuple[str, ...]] = {
    "review_iterations": ("review_rounds",),
    "coverage_delta": ("coverage_before_pct", "coverage_after_pct"),
    "ci_result": ("ci_status",),
}
"""The metadata keys each replay hook reads; each must be in its phase spec's ``metadata``."""


class MaterializationTail:
    """Feeds new materializations into ``metrics`` on each :meth:`poll`, from a storage-id
    cursor, so a scrape of the ops server sees runs that ran in other pods."""

    def __init__(self, instance: dg.DagsterInstance, metrics: PhaseMetrics) -> None:
        self.instance = instance
        self.metrics = metrics
        self.cursor: int | None = None

    def start_from_now(self) -> None:
        """Skip history: a restarted server must not re-count what an earlier one exposed."""
        self.cursor = self.instance.event_log_storage.get_maximum_record_id() or 0

    def poll(self, limit: int) -> int:
        """Replay the oldest ``limit`` records past the cursor. Each phase's ascending stream is
        read only ``limit`` deep (the oldest ``limit`` overall are among those), so a backlog is
        drained ``limit`` at a time instead of being fetched whole and cut on every poll."""
        oldest = (
            islice(_phase_records(self.instance, phase, None, self.cursor), limit)
            for phase in PHASES
        )
        records = sorted(chain.from_iterable(oldest), key=lambda r: r.storage_id)[:limit]
        for record in records:
            observe_record(self.metrics, record)
            self.cursor = record.storage_id
        return len(records)
