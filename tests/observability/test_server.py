"""The ops port: /healthz, /readyz (200 and 503), /metrics with every metric after a run."""

from __future__ import annotations

import threading
import time

import dagster as dg
import httpx
import pytest
from prometheus_client.exposition import choose_encoder

from tests.observability.simulated import simulated_run
from veranda_dagster.observability import server as ops_server
from veranda_dagster.observability.metrics import PhaseMetrics
from veranda_dagster.observability.server import OpsServer, check_with_timeout

OM = "application/openmetrics-text; version=1.0.0"
METRIC_LINES = [
    'veranda_phase_duration_seconds_bucket{le="1800.0",phase="patch"} 1.0',
    'veranda_phase_duration_seconds_count{phase="ci_outcome"} 1.0',
    "veranda_review_iterations_sum 2.0",
    'veranda_tokens_total{direction="in",family="codex"} 60000.0',
    'veranda_tokens_total{direction="out",family="claude"} 3780.0',
    'veranda_tokens_total{direction="cached",family="claude"} 19000.0',
    'veranda_usd_total{family="codex"}',
    "veranda_task_usd_count 1.0",
    'veranda_coverage_delta_bucket{le="5.0"} 1.0',
    'veranda_ci_results_total{status="success"} 1.0',
    'veranda_backend_resolutions_total{family="codex",mode="api_key",reason="fallback_quota"} 2.0',
    'veranda_backend_resolutions_total{family="claude",mode="api_key",reason="preferred"} 2.0',
    'veranda_backend_resolutions_total{family="claude",mode="subscription",reason="preferred"} 1.0',
]


def test_metrics_endpoint_exposes_every_metric_after_a_simulated_run() -> None:
    metrics = PhaseMetrics()
    for phase, value, secs in simulated_run():
        metrics.observe_phase(phase, value, secs)
    with OpsServer(registry=metrics.registry, readiness=lambda: None) as server:
        assert server.url.startswith("http://127.0.0.1:")
        resp = httpx.get(server.url + "/metrics", timeout=5)
        om = httpx.get(server.url + "/metrics", headers={"Accept": OM}, timeout=5)
    assert om.headers["content-type"].startswith("application/openmetrics-text")
    assert resp.status_code == 200
    assert resp.headers["content-type"] == choose_encoder("")[1]  # text format for plain GETs
    for line in METRIC_LINES:
        assert line in resp.text, line
    assert "ENG-42" not in resp.text


def test_healthz_is_local_and_readyz_reflects_the_check() -> None:
    def broken() -> None:
        raise ConnectionError("postgresql://veranda:hunter2@db/veranda refused")

    with OpsServer(readiness=broken, registry=PhaseMetrics().registry) as server:
        assert httpx.get(server.url + "/healthz", timeout=5).status_code == 200
        ready = httpx.get(server.url + "/readyz", timeout=5)
        assert httpx.get(server.url + "/nope", timeout=5).status_code == 404
    assert ready.status_code == 503
    assert "ConnectionError" in ready.text and "hunter2" not in ready.text


def test_readyz_against_a_real_instance_and_a_hung_check(ops_home) -> None:
    # default readiness: DagsterInstance.get() (DAGSTER_HOME=ops_home) lists runs
    with OpsServer(registry=PhaseMetrics().registry, readiness_timeout_s=10) as server:
        resp = httpx.get(server.url + "/readyz", timeout=10)
    assert resp.status_code == 200, resp.text
    started = time.monotonic()
    assert check_with_timeout(lambda: time.sleep(5), 0.2) == "instance check exceeded 0.2 s"
    assert time.monotonic() - started < 2


def test_tail_replays_stored_materializations_into_metrics(ops_home) -> None:
    from veranda_dagster.observability.materializations import MaterializationTail

    metrics = PhaseMetrics()
    with dg.DagsterInstance.get() as instance:
        fresh = MaterializationTail(instance, PhaseMetrics())
        fresh.start_from_now()
        assert fresh.poll(limit=100) == 0  # a restarted server does not re-count history
        tail = MaterializationTail(instance, metrics)
        assert tail.poll(limit=4) == 4  # bounded per poll
        assert tail.poll(limit=100) == 2
        assert tail.poll(limit=100) == 0  # the cursor moved: nothing is counted twice
    r = metrics.registry
    assert r.get_sample_value("veranda_phase_duration_seconds_count", {"phase": "patch"}) == 2
    assert r.get_sample_value("veranda_ci_results_total", {"status": "failure"}) == 1
    assert (
        r.get_sample_value(
            "veranda_backend_resolutions_total",
            {"family": "codex", "mode": "api_key", "reason": "fallback_quota"},
        )
        == 1
    )
    assert r.get_sample_value("veranda_task_usd_count") == 2
    assert r.get_sample_value("veranda_task_usd_sum") == pytest.approx(0.6121 + 1.4715)
    assert r.get_sample_value("veranda_coverage_delta_count") == 1  # ENG-2 had no coverage


def test_serve_ops_command_serves_the_port(tmp_path) -> None:
    """The real entry point the image runs, in its own process, on loopback port 0."""
    import os
    import subprocess
    import sys

    ENTRY = "import sys; from veranda_dagster.cli import main; sys.exit(main())"
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "serve-ops", "--port", "0", "--no-tail"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split(" on ", 1)[1].split(" ", 1)[0]
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(url + "/healthz", timeout=5).text == "ok\n"
        assert "veranda_phase_duration_seconds" in httpx.get(url + "/metrics", timeout=5).text
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()  # the pipe too, not left to the collector


def test_instance_readiness_reuses_one_instance_and_reconnects_after_a_failure(monkeypatch):
    from veranda_dagster.observability.server import InstanceReadiness

    made: list[object] = []

    class FakeInstance:
        def __init__(self) -> None:
            self.fail = False
            self.disposed = False
            made.append(self)

        def get_runs(self, limit: int) -> list:
            if self.fail:
                raise OSError("database went away")
            return []

        def dispose(self) -> None:
            self.disposed = True

    monkeypatch.setattr(dg.DagsterInstance, "get", staticmethod(FakeInstance))
    ready = InstanceReadiness()
    ready()
    ready()
    assert len(made) == 1
    made[0].fail = True
    with pytest.raises(OSError):
        ready()
    assert made[0].disposed
    ready()
    assert len(made) == 2


@pytest.mark.parametrize("hung", [True, False], ids=["hung", "answering"])
def test_readyz_gives_up_on_a_hung_instance_at_readiness_timeout_s(
    monkeypatch: pytest.MonkeyPatch, hung: bool
) -> None:
    """``READINESS_TIMEOUT_S`` patched to 0.2 s, the server's default: an instance check that
    hangs (a storage call that never returns) is a 503 naming the bound within it, so the
    kubelet's probe gets an answer; the twin, a check that returns, is a 200."""
    monkeypatch.setattr(ops_server, "READINESS_TIMEOUT_S", 0.2)
    release = threading.Event()

    def check() -> None:
        if hung:
            release.wait(10)

    try:
        with OpsServer(registry=PhaseMetrics().registry, readiness=check) as server:
            started = time.monotonic()
            resp = httpx.get(server.url + "/readyz", timeout=5)
            took = time.monotonic() - started
    finally:
        release.set()
    if hung:
        assert resp.status_code == 503 and "instance check exceeded 0.2 s" in resp.text
        assert 0.2 <= took < 0.2 + 2.0
    else:
        assert resp.status_code == 200
