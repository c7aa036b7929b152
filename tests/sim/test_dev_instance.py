"""``veranda dev`` and the demo run under the shipped instance's bounds: the ``dagster.yaml``
they write holds the same values as the repository's, and any difference is named."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.instance.ref import InstanceRef

from veranda_dagster import instance_config
from veranda_dagster.cli.dev import instance_line
from veranda_dagster.instance_config import instance_differences, shipped_instance
from veranda_dagster.sim.world import dagster_yaml

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = yaml.safe_load((ROOT / "dagster.yaml").read_text())


def test_the_instance_data_is_the_shipped_dagster_yaml() -> None:
    assert shipped_instance() == SHIPPED
    assert instance_differences(shipped_instance(), SHIPPED) == []


def test_the_simulation_writes_the_shipped_values(tmp_path: Path) -> None:
    written = yaml.safe_load(dagster_yaml())
    assert written == SHIPPED
    (tmp_path / "dagster.yaml").write_text(dagster_yaml())
    assert instance_line(tmp_path).startswith("the shipped dagster.yaml (10 runs")
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path))) as instance:
        runs = instance.get_concurrency_config().run_queue_config
        assert runs is not None and runs.max_concurrent_runs == 10
        limits = {limit["key"]: limit["limit"] for limit in runs.tag_concurrency_limits}
        assert limits["veranda/ticket-run"] == 4 and limits["dagster/backfill"] == 4
        assert instance.run_coordinator.dequeue_interval_seconds == 1  # type: ignore[attr-defined]


def test_a_narrowed_instance_names_each_difference(tmp_path: Path) -> None:
    (tmp_path / "dagster.yaml").write_text(dagster_yaml(pool_limit=1))
    line = instance_line(tmp_path)
    assert (
        line == "differs from the shipped dagster.yaml: concurrency.pools.default_limit: 1 "
        "(shipped: 4)"
    )
    doc = {**SHIPPED, "telemetry": {"enabled": True}}
    del doc["run_retries"]
    assert instance_differences(doc, SHIPPED) == [
        "run_retries: unset (shipped: {'enabled': True, 'max_retries': 2, "
        "'retry_on_asset_or_op_failure': False})",
        "telemetry.enabled: True (shipped: False)",
    ]


RUN_BOUNDS = {
    # constant: how a real DagsterInstance reports it
    "MAX_RUN_RETRIES": lambda i: i.run_retries_max_retries,
    "RUN_START_TIMEOUT_S": lambda i: i.run_monitoring_start_timeout_seconds,
    "RUN_CANCEL_TIMEOUT_S": lambda i: i.run_monitoring_cancel_timeout_seconds,
}


@pytest.mark.parametrize("name", list(RUN_BOUNDS))
def test_each_run_bound_reaches_the_instance_dagster_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """``MAX_RUN_RETRIES``, ``RUN_START_TIMEOUT_S`` and ``RUN_CANCEL_TIMEOUT_S`` are what the
    repository's ``dagster.yaml`` says and what Dagster's run monitoring and retry daemon read
    from the instance the simulation writes; patched, the patched value is what Dagster reads
    (the bound is the constant's, not a copy of it)."""
    read = RUN_BOUNDS[name]
    home = tmp_path / "shipped"  # the repository's file, in a home of its own (storage)
    home.mkdir()
    (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as shipped:
        assert read(shipped) == getattr(instance_config, name)
    monkeypatch.setattr(instance_config, name, 7)
    (tmp_path / "dagster.yaml").write_text(dagster_yaml())
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path))) as instance:
        assert read(instance) == 7
