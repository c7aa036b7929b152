"""The ops server's metrics tail, kept alive: it reconnects with backoff and reports its health.

Before, a tail started while the instance was down died for good in its first line while
``/healthz`` kept answering 200, so the scrape went flat without anyone seeing why. Now every
failure (reaching the instance, or a poll) is counted on ``veranda_ops_tail_errors_total``, the
tail's state is the ``veranda_ops_tail_up`` gauge, ``/readyz`` answers 503 while the tail is
down, and the next attempt waits ``OPS_TAIL_RETRY_INITIAL_S`` doubling to
``OPS_TAIL_RETRY_MAX_S``. A reconnected tail starts from the instance's newest record.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from veranda_dagster.domain.core.bounds import (
    MAX_TAIL_EVENTS,
    OPS_TAIL_INTERVAL_S,
    OPS_TAIL_RETRY_INITIAL_S,
    OPS_TAIL_RETRY_MAX_S,
)
from veranda_dagster.observability.metrics import PhaseMetrics

log = logging.getLogger("veranda.ops")

_GAUGES: dict[int, tuple[Counter, Gauge]] = {}
_GAUGES_LOCK = threading.Lock()


def tail_metrics(registry: CollectorRegistry) -> tuple[Counter, Gauge]:
    """The tail's own error counter and up gauge, registered once per registry."""
    with _GAUGES_LOCK:
        if id(registry) not in _GAUGES:
            errors = Counter(
                "veranda_ops_tail_errors",
                "Failed attempts of the ops metrics tail to reach or read the instance",
                registry=registry,
            )
            up = Gauge(
                "veranda_ops_tail_up",
                "1 while the ops metrics tail reads the instance, 0 while it is down",
                registry=registry,
            )
            _GAUGES[id(registry)] = (errors, up)
        return _GAUGES[id(registry)]


class TailDownError(RuntimeError):
    """The metrics tail cannot read the instance; its text (an error type) is safe to show."""

    safe_text = True


class TailRunner:
    def __init__(
        self,
        metrics: PhaseMetrics,
        instance_factory: Callable[[], Any],
        *,
        interval_s: float = OPS_TAIL_INTERVAL_S,
        retry_initial_s: float = OPS_TAIL_RETRY_INITIAL_S,
        retry_max_s: float = OPS_TAIL_RETRY_MAX_S,
    ) -> None:
        self.metrics = metrics
        self.instance_factory = instance_factory
        self.interval_s = interval_s
        self.retry_initial_s = retry_initial_s
        self.retry_max_s = retry_max_s
        self.errors, self.up = tail_metrics(metrics.registry)
        self.healthy = False
        self.last_error = "not started"
        self.stop_event = threading.Event()
        self._tail: Any = None
        self._instance: Any = None

    def step(self) -> bool:
        """One attempt: connect if needed, then poll. True when the tail read the instance."""
        from veranda_dagster.observability.materializations import MaterializationTail

        try:
            if self._tail is None:
                self._instance = self.instance_factory()
                tail = MaterializationTail(self._instance, self.metrics)
                tail.start_from_now()
                self._tail = tail
            else:
                self._tail.poll(MAX_TAIL_EVENTS)
        except Exception as exc:  # every failure is counted, reported and retried
            self.errors.inc()
            self.up.set(0)
            self.healthy = False
            self.last_error = type(exc).__name__  # the type only: texts may hold a DSN
            log.warning("metrics tail down (%s); retrying with backoff", self.last_error)
            self._drop()
            return False
        self.healthy = True
        self.last_error = ""
        self.up.set(1)
        return True

    def _drop(self) -> None:
        instance, self._instance, self._tail = self._instance, None, None
        if instance is not None and hasattr(instance, "dispose"):
            try:
                instance.dispose()
            except Exception:  # a broken connection may fail to close; it is dropped anyway
                log.debug("disposing the instance failed", exc_info=True)

    def run(self) -> None:
        wait = self.retry_initial_s
        while not self.stop_event.is_set():
            if self.step():
                wait = self.retry_initial_s
                self.stop_event.wait(self.interval_s)
            else:
                self.stop_event.wait(wait)
                wait = min(wait * 2, self.retry_max_s)

    def start(self) -> TailRunner:
        threading.Thread(target=self.run, name="veranda-ops-tail", daemon=True).start()
        return self

    def stop(self) -> None:
        self.stop_event.set()

    def check(self) -> None:
        """A readiness check: raises while the tail is down."""
        if not self.healthy:
            raise TailDownError(f"metrics tail down ({self.last_error or 'no read yet'})")


def both(*checks: Callable[[], None]) -> Callable[[], None]:
    def check() -> None:
        for each in checks:
            each()

    return check
