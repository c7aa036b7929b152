"""Every metric the issue names, fed by a simulated run, with bounded labels."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from tests.observability.simulated import TICKET, run_usd, simulated_run
from veranda_dagster.domain.core.bounds import MAX_TRACKED_TASKS
from veranda_dagster.observability import metrics as m


def _fed() -> m.PhaseMetrics:
    metrics = m.PhaseMetrics()
    for phase, value, secs in simulated_run():
        metrics.observe_phase(phase, value, secs)
    return metrics


def sample(metrics: m.PhaseMetrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


def test_simulated_run_populates_every_metric_with_right_labels() -> None:
    metrics = _fed()
    assert sample(metrics, "veranda_phase_duration_seconds_count", phase="patch") == 1
    assert sample(metrics, "veranda_phase_duration_seconds_sum", phase="patch") == 900.0
    assert sample(metrics, "veranda_phase_duration_seconds_count", phase="ticket") == 1
    assert sample(metrics, "veranda_review_iterations_sum") == 2
    assert sample(metrics, "veranda_review_iterations_count") == 1
    assert sample(metrics, "veranda_tokens_total", direction="in", family="codex") == 60000
    assert sample(metrics, "veranda_tokens_total", direction="out", family="claude") == 3780
    assert sample(metrics, "veranda_tokens_total", direction="cached", family="claude") == 19000
    assert sample(metrics, "veranda_usd_total", family="codex") == pytest.approx(0.66)
    assert sample(metrics, "veranda_task_usd_count") == 1
    assert sample(metrics, "veranda_task_usd_sum") == pytest.approx(run_usd())
    # +2.5 points; with negative buckets the client exposes no _sum, so read the buckets
    assert sample(metrics, "veranda_coverage_delta_bucket", le="1.0") == 0
    assert sample(metrics, "veranda_coverage_delta_bucket", le="5.0") == 1
    assert sample(metrics, "veranda_ci_results_total", status="success") == 1
    fallback = dict(family="codex", mode="api_key", reason="fallback_quota")
    assert sample(metrics, "veranda_backend_resolutions_total", **fallback) == 2
    preferred = dict(family="claude", mode="api_key", reason="preferred")
    assert sample(metrics, "veranda_backend_resolutions_total", **preferred) == 2
    assert metrics.tracked_tasks() == 0  # the CI outcome closed the task


def test_no_ticket_ids_or_raw_reasons_in_exposition() -> None:
    text = generate_latest(_fed().registry).decode()
    assert TICKET not in text and "eng-42" not in text
    assert "fallback:quota" not in text and "claude/api_key" not in text
    assert "https://" not in text and "a" * 40 not in text


def test_unknown_phase_and_status_collapse_to_other() -> None:
    metrics = m.PhaseMetrics()
    metrics.observe_phase("ENG-1-custom", object(), 1.0)
    assert sample(metrics, "veranda_phase_duration_seconds_count", phase="other") == 1


def test_task_accumulator_is_bounded_exactly() -> None:
    metrics = m.PhaseMetrics()
    for i in range(MAX_TRACKED_TASKS + 1):
        metrics.add_task_usd(f"T-{i}", 0.01)
    assert metrics.tracked_tasks() == MAX_TRACKED_TASKS
    assert metrics.finish_task("T-0") == 0.0  # the oldest was forgotten
    assert metrics.finish_task(f"T-{MAX_TRACKED_TASKS}") == pytest.approx(0.01)


def test_module_hooks_feed_the_swapped_default() -> None:
    fresh = m.PhaseMetrics()
    previous = m.use_metrics(fresh)
    try:
        m.record_resolution("gemini", "oauth", "fallback:auth:claude/api_key")
        phase, value, secs = simulated_run()[1]
        m.observe_phase(phase, value, secs)
    finally:
        m.use_metrics(previous)
    labels = dict(family="gemini", mode="oauth", reason="fallback_auth")
    assert sample(fresh, "veranda_backend_resolutions_total", **labels) == 1
    assert sample(fresh, "veranda_phase_duration_seconds_count", phase="repo_guess") == 1
    assert m.default_metrics() is previous
