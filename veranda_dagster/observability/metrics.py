"""Prometheus metrics for the phase graph: the decisions, not just the outcomes.

The asset shell calls :func:`observe_phase` once per materialization; the ops server also
replays materializations it reads from the instance (``ops/materializations.py``), since
under the K8sRunLauncher every run is its own pod and a step's process is gone before any
scrape.

Every metric lives on one dedicated :class:`~prometheus_client.CollectorRegistry` held by a
:class:`PhaseMetrics`, so tests build a fresh one and nothing leaks into the client's global
registry. Labels are low-cardinality only: phase names, vendor/mode, a reason *label*
(``fallback_auth``, never ``fallback:auth:claude/api_key``), CI status, token direction. No
ticket ids, PR numbers, SHAs or model ids.

USD is exposed twice, on purpose: ``veranda_usd_total{vendor}`` (counter, per model call, so
spend by vendor is a ``rate()``) and ``veranda_task_usd`` (histogram, one observation per
ticket when its ``ci_outcome`` lands, summed over that ticket's phases seen by this process).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Histogram

from veranda_dagster.domain.core import phases
from veranda_dagster.domain.core.bounds import MAX_TRACKED_TASKS
from veranda_dagster.domain.core.phases import MetricHook
from veranda_dagster.observability.workspace_metrics import WorkspaceDiskCollector
from veranda_dagster.settings import default_workspace_root

PHASES: tuple[str, ...] = phases.PHASE_NAMES
"""The phase label's whole domain (the phase registry); anything else is recorded as ``other``."""

CI_STATUSES = ("success", "failure", "timed_out")
PHASE_SECONDS_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200)
"""Phases run from a second (ticket) to hours (patch); the client's default tops out at 10 s."""
REVIEW_BUCKETS = (0, 1, 2, 3, 4, 5, 6)
"""Review rounds are bounded at MAX_REVIEW_ROUNDS (5): one bucket per possible count."""
TASK_USD_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50)
COVERAGE_DELTA_BUCKETS = (-10, -5, -1, -0.1, 0, 0.1, 1, 5, 10, 25)
"""Coverage delta (after - before) in percentage points. Negative buckets mean the client
exposes ``_bucket``/``_count`` but no ``_sum`` (OpenMetrics rule): read it via the buckets."""


def _label(value: str | None, known: tuple[str, ...] | None = None) -> str:
    """Bound a label value: unknown phase/status names collapse to ``other``."""
    text = (value or "none").strip() or "none"
    if known is not None and text not in known:
        return "other"
    return text


def reason_label(reason: str | None) -> str:
    """``fallback:auth:claude/api_key`` -> ``fallback_auth``; ``preferred``/``pinned`` as is.

    Same rule as ``vendors.resolver.reason_label``, kept here so a raw reason (which names a
    vendor/mode and so multiplies series) never becomes a label even when it arrives from
    stored metadata rather than from the resolver.
    """
    text = (reason or "none").strip() or "none"
    if text.startswith("fallback:"):
        parts = text.split(":", 2)
        return "fallback_" + (parts[1] if len(parts) > 1 and parts[1] else "unknown")
    return text.split(":", 1)[0]


class PhaseMetrics:
    """The metric families on one registry, plus the per-task USD accumulator."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        workspaces_root: Callable[[], str] | None = None,
    ) -> None:
        """``workspaces_root``: where the workspace sweep keeps its record (the workspace disk
        gauges are read from it at scrape time); ``None`` leaves those metrics out."""
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        if workspaces_root is not None:
            r.register(WorkspaceDiskCollector(workspaces_root))
        self.phase_duration = Histogram(
            "veranda_phase_duration_seconds",
            "Wall-clock seconds of one phase materialization.",
            ["phase"],
            buckets=PHASE_SECONDS_BUCKETS,
            registry=r,
        )
        self.review_iterations = Histogram(
            "veranda_review_iterations",
            "Self-review rounds one pull request took before clean or the bound.",
            buckets=REVIEW_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            "veranda_tokens",
            "Tokens reported by the vendors' own streams, by direction and vendor.",
            ["direction", "family"],
            registry=r,
        )
        self.usd = Counter(
            "veranda_usd",
            "USD spent on model calls, by vendor (rate table applied per call).",
            ["family"],
            registry=r,
        )
        self.task_usd = Histogram(
            "veranda_task_usd",
            "USD of one ticket, summed over its phases, observed when its CI outcome lands.",
            buckets=TASK_USD_BUCKETS,
            registry=r,
        )
        self.coverage_delta = Histogram(
            "veranda_coverage_delta",
            "Coverage after minus before the patch, in percentage points.",
            buckets=COVERAGE_DELTA_BUCKETS,
            registry=r,
        )
        self.ci_results = Counter(
            "veranda_ci_results",
            "CI outcomes of the agent's pull requests.",
            ["status"],
            registry=r,
        )
        self.resolutions = Counter(
            "veranda_backend_resolutions",
            "Vendor resolutions, one per model call, by vendor, mode and reason label.",
            ["family", "mode", "reason"],
            registry=r,
        )
        self._task_usd: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    # --- the per-call and per-phase observations ------------------------------------------

    def record_resolution(self, vendor: str, mode: str, reason: str) -> None:
        self.resolutions.labels(
            family=_label(vendor), mode=_label(mode), reason=reason_label(reason)
        ).inc()

    def record_call(
        self,
        vendor: str,
        mode: str,
        reason: str,
        tokens_in: int,
        tokens_out: int,
        tokens_cached: int,
        usd: float,
    ) -> None:
        fam = _label(vendor)
        self.record_resolution(vendor, mode, reason)
        for direction, count in (("in", tokens_in), ("out", tokens_out), ("cached", tokens_cached)):
            if count > 0:
                self.tokens.labels(direction=direction, family=fam).inc(count)
        if usd > 0:
            self.usd.labels(family=fam).inc(usd)

    def add_task_usd(self, task: str, usd: float) -> None:
        """Accumulate one phase's USD for a ticket; the oldest tickets are forgotten past
        MAX_TRACKED_TASKS so a long-lived process does not grow without bound."""
        with self._lock:
            self._task_usd[task] = self._task_usd.get(task, 0.0) + max(usd, 0.0)
            self._task_usd.move_to_end(task)
            while len(self._task_usd) > MAX_TRACKED_TASKS:
                self._task_usd.popitem(last=False)

    def finish_task(self, task: str) -> float:
        """Observe and forget a ticket's accumulated USD (its CI outcome landed)."""
        with self._lock:
            total = self._task_usd.pop(task, 0.0)
        self.task_usd.observe(total)
        return total

    def tracked_tasks(self) -> int:
        with self._lock:
            return len(self._task_usd)

    def observe_phase(self, phase: str, value: object, duration_s: float) -> None:
        """Everything one phase value says, from its calls and its phase-specific fields."""
        name = _label(phase, PHASES)
        self.phase_duration.labels(phase=name).observe(max(float(duration_s), 0.0))
        calls = list(getattr(value, "calls", None) or [])
        for call in calls:
            usage = call.usage
            self.record_call(
                call.vendor,
                call.mode,
                call.reason,
                usage.input,
                usage.output,
                usage.cached,
                float(call.usd),
            )
        task = getattr(value, "ticket_id", None)
        if task:
            self.add_task_usd(str(task), sum(float(c.usd) for c in calls))
        hook = phases.PHASES[name].metric if name in phases.PHASES else None
        if hook is not None:
            LIVE_HOOKS[hook](self, value, str(task) if task else None)


def _review_iterations(metrics: PhaseMetrics, value: object, task: str | None) -> None:
    metrics.review_iterations.observe(len(getattr(value, "rounds", []) or []))


def _coverage_delta(metrics: PhaseMetrics, value: object, task: str | None) -> None:
    before = getattr(value, "coverage_before", None)
    after = getattr(value, "coverage_after", None)
    if before is not None and after is not None:
        metrics.coverage_delta.observe(float(after) - float(before))


def _ci_result(metrics: PhaseMetrics, value: object, task: str | None) -> None:
    metrics.ci_results.labels(status=_label(getattr(value, "status", None), CI_STATUSES)).inc()
    if task:
        metrics.finish_task(task)


LIVE_HOOKS: dict[MetricHook, Callable[[PhaseMetrics, object, str | None], None]] = {
    "review_iterations": _review_iterations,
    "coverage_delta": _coverage_delta,
    "ci_result": _ci_result,
}
"""Each phase spec's ``metric`` hook, fed the phase's value in the process that made it."""


def _workspaces_root() -> str:
    return os.environ.get("VERANDA_WORKSPACES", "").strip() or default_workspace_root()


_DEFAULT = PhaseMetrics(workspaces_root=_workspaces_root)
_DEFAULT_LOCK = threading.Lock()


def default_metrics() -> PhaseMetrics:
    """The process's metrics: what the asset shell feeds and ``/metrics`` serves."""
    return _DEFAULT


def use_metrics(metrics: PhaseMetrics) -> PhaseMetrics:
    """Swap the process's metrics (tests, or a server with its own registry); returns the old."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        previous, _DEFAULT = _DEFAULT, metrics
    return previous


def observe_phase(phase: str, value: object, duration_s: float) -> None:
    """The asset shell's hook: record one materialized phase value on the process metrics."""
    _DEFAULT.observe_phase(phase, value, duration_s)


def record_resolution(vendor: str, mode: str, reason: str) -> None:
    """For a resolution hook *outside* asset runs (a CLI probe, a sensor). Inside a run the
    asset shell already counts every ModelCall through :func:`observe_phase`; installing this
    as the agent's hook there as well would count each call twice."""
    _DEFAULT.record_resolution(vendor, mode, reason)
