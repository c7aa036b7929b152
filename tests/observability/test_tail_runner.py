"""The ops tail started with the instance down, then up: it retries, says so, and recovers.

The instance is the real one ``DAGSTER_HOME`` names (``DagsterInstance.get``, as the image runs
it); "down" is a home that is not there yet, "up" is the home created while the server runs.
"""

from __future__ import annotations

import itertools
import socket
import time
from collections.abc import Callable

import dagster as dg
import httpx

from veranda_dagster.observability import tail_runner
from veranda_dagster.observability.materializations import read_phase_records
from veranda_dagster.observability.metrics import PhaseMetrics
from veranda_dagster.observability.server import OpsServer
from veranda_dagster.observability.tail_runner import TailRunner, both

WAIT_S = 60.0


def _until(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_ops_server_started_with_the_instance_down_then_up(tmp_path, monkeypatch):
    home = tmp_path / "dagster_home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))  # not there yet: the instance is down
    metrics = PhaseMetrics()
    tail = TailRunner(
        metrics, dg.DagsterInstance.get, interval_s=0.05, retry_initial_s=0.05, retry_max_s=0.2
    )
    errors = lambda: metrics.registry.get_sample_value("veranda_ops_tail_errors_total") or 0  # noqa: E731
    up = lambda: metrics.registry.get_sample_value("veranda_ops_tail_up")  # noqa: E731
    with OpsServer(registry=metrics.registry, readiness=both(lambda: None, tail.check)) as server:
        tail.start()
        try:
            _until(lambda: errors() >= 3, "the tail never retried")
            assert httpx.get(server.url + "/healthz", timeout=5).status_code == 200
            ready = httpx.get(server.url + "/readyz", timeout=5)
            assert ready.status_code == 503 and "metrics tail down" in ready.text
            scrape = httpx.get(server.url + "/metrics", timeout=5).text
            assert "veranda_ops_tail_up 0.0" in scrape and "veranda_ops_tail_errors_total" in scrape

            home.mkdir()  # the instance comes up
            _until(lambda: up() == 1, "the tail never reconnected")
            assert httpx.get(server.url + "/readyz", timeout=5).status_code == 200
            failed = errors()
            time.sleep(0.3)  # further polls succeed: no new errors
            assert errors() == failed
        finally:
            tail.stop()


def test_backoff_doubles_to_its_cap_and_resets_after_a_success():
    calls: list[float] = []
    outcomes = iter([False] * 5 + [True] * 3)

    def factory():
        calls.append(time.monotonic())
        if not next(outcomes, True):
            raise ConnectionError("down")
        return _NoRecords()

    tail = TailRunner(
        PhaseMetrics(), factory, interval_s=0.01, retry_initial_s=0.05, retry_max_s=0.2
    ).start()
    _until(lambda: len(calls) >= 6 and tail.healthy, "never reconnected")
    tail.stop()
    gaps = [b - a for a, b in itertools.pairwise(calls)][:5]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1 and gaps[2] >= 0.2 and gaps[3] >= 0.2
    assert gaps[3] < 0.2 * 5  # capped, not still doubling


class _NoRecords:
    class event_log_storage:
        @staticmethod
        def get_maximum_record_id() -> int:
            return 0

    def dispose(self) -> None:
        return None


def test_an_idle_connection_is_closed_at_the_socket_timeout():
    """``OPS_SOCKET_TIMEOUT_S`` (through the ``socket_timeout_s`` it feeds, 0.3 s here)
    against twenty connections that send nothing: each is hung up on, and the port still
    answers a probe."""
    with OpsServer(
        registry=PhaseMetrics().registry, readiness=lambda: None, socket_timeout_s=0.3
    ) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
        try:
            for conn in idle:
                conn.settimeout(10)
                assert conn.recv(1) == b""  # the server hung up: no thread is held
            assert httpx.get(server.url + "/healthz", timeout=5).status_code == 200
        finally:
            for conn in idle:
                conn.close()


def test_one_tail_step_replays_at_most_its_bound_of_events(ops_home, monkeypatch):
    """``MAX_TAIL_EVENTS`` (here one less than the stored history, which a test can afford to
    write): after an outage the backlog is drained at most the bound per step, oldest first,
    and the next step takes the rest; nothing is counted twice."""
    with dg.DagsterInstance.get() as instance:
        stored = [r.storage_id for r in read_phase_records(instance)]
    monkeypatch.setattr(tail_runner, "MAX_TAIL_EVENTS", len(stored) - 1)
    runner = TailRunner(PhaseMetrics(), dg.DagsterInstance.get)
    try:
        assert runner.step()  # connected, from now on
        runner._tail.cursor = None  # the whole history is the backlog, as after an outage
        assert runner.step() and runner._tail.cursor == stored[-2]
        assert runner.step() and runner._tail.cursor == stored[-1]
        assert runner.step() and runner._tail.cursor == stored[-1]
    finally:
        runner._drop()
