"""``/metrics`` for the workspaces' disk: read at scrape time from the last sweep's record.

``veranda_workspace_bytes`` (clones and shared stores, as the last sweep left them),
``veranda_workspace_bound_bytes`` (the named bound it enforces), ``veranda_workspace_over_bound``
(1 when only protected clones are left over it) and ``veranda_workspace_evictions_total`` by
reason. No ticket ids: the reason is the only label.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from veranda_dagster.domain.clone.sweep_record import read_sweep_record

EVICTION_REASONS = ("closed", "age", "size", "store")


class WorkspaceDiskCollector(Collector):
    def __init__(self, root: Callable[[], str]) -> None:
        self._root = root

    def collect(self) -> Iterator[Metric]:
        record = read_sweep_record(self._root())
        if record is None:
            return
        yield GaugeMetricFamily(
            "veranda_workspace_bytes",
            "Bytes of the ticket clones and shared object stores after the last sweep.",
            value=record.total_bytes,
        )
        yield GaugeMetricFamily(
            "veranda_workspace_bound_bytes",
            "The bound the sweep keeps the workspaces within (VERANDA_WORKSPACES_MAX_BYTES).",
            value=record.bound_bytes,
        )
        yield GaugeMetricFamily(
            "veranda_workspace_over_bound",
            "1 when the workspaces are over the bound with only in-flight clones left.",
            value=1.0 if record.over_bound else 0.0,
        )
        evictions = CounterMetricFamily(
            "veranda_workspace_evictions",
            "Clones and unborrowed shared stores (store) removed by the sweep, by reason.",
            labels=["reason"],
        )
        for reason in EVICTION_REASONS:
            evictions.add_metric([reason], record.evictions.get(reason, 0))
        yield evictions
