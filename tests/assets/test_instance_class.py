"""The shipped instance class (``veranda_dagster/instance.py``): a ticket run asks the instance
whether its ticket exists about 140 times; the storage is asked once. A *no* is never
remembered, a *yes* is asked again after its time-to-live, a delete is seen at once, and the
memory is bounded. Its default SQLite storage keeps one engine per event-log file
(``sqlite_storage.py``), bounded. Real instance from the shipped ``dagster.yaml`` (SQLite in a
temp home)."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from typing import Any

import dagster as dg
import pytest
import sqlalchemy
from dagster._core.instance.ref import InstanceRef

from tests.assets.fakes import resources
from tests.support.processes import ROOT
from veranda_dagster import instance as instance_module
from veranda_dagster import sqlite_storage
from veranda_dagster.assets import PHASE_ASSETS
from veranda_dagster.instance import VerandaInstance
from veranda_dagster.partitions import TICKETS_NAME
from veranda_dagster.sqlite_storage import EngineReusingSqliteEventLogStorage

KEY = "ENG-38"

STORAGE_QUERIES_PER_RUN = 2
"""The run's partition-existence queries that reach the storage: its ticket once (twice at
most, should the run outlive the time-to-live)."""


@pytest.fixture
def instance(tmp_path: Any) -> Iterator[dg.DagsterInstance]:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as inst:
        yield inst


@pytest.fixture
def storage_queries(instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Each ``has_dynamic_partition`` query that reaches the event log storage, by key."""
    asked: Counter[str] = Counter()
    storage = instance.event_log_storage
    original = storage.has_dynamic_partition

    def counting(partitions_def_name: str, partition_key: str) -> bool:
        asked[partition_key] += 1
        return original(partitions_def_name, partition_key)

    monkeypatch.setattr(storage, "has_dynamic_partition", counting)
    return asked


def _run_one_ticket(instance: dg.DagsterInstance, tmp_path: Any) -> dg.ExecuteInProcessResult:
    """Every phase of ``KEY`` on the fakes, its partition registered first, as the sensor does."""
    instance.add_dynamic_partitions(TICKETS_NAME, [KEY])
    (tmp_path / "calls").mkdir()
    result = dg.materialize(
        PHASE_ASSETS,
        partition_key=KEY,
        instance=instance,
        resources=resources(str(tmp_path / "calls"), str(tmp_path / "values")),
    )
    assert result.success
    return result


def test_the_shipped_dagster_yaml_opens_the_veranda_instance(
    instance: dg.DagsterInstance,
) -> None:
    assert type(instance) is VerandaInstance


def test_a_ticket_run_asks_the_storage_about_its_ticket_once(
    instance: dg.DagsterInstance,
    storage_queries: Counter[str],
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asks: Counter[str] = Counter()
    remembered = VerandaInstance.has_dynamic_partition

    def counting(self: VerandaInstance, partitions_def_name: str, partition_key: str) -> bool:
        asks[partition_key] += 1
        return remembered(self, partitions_def_name, partition_key)

    monkeypatch.setattr(VerandaInstance, "has_dynamic_partition", counting)
    _run_one_ticket(instance, tmp_path)
    assert asks[KEY] >= 50  # Dagster's own questions, unchanged
    assert 1 <= storage_queries[KEY] <= STORAGE_QUERIES_PER_RUN


def test_a_no_is_never_remembered_and_a_delete_is_seen_at_once(
    instance: dg.DagsterInstance, storage_queries: Counter[str]
) -> None:
    assert not instance.has_dynamic_partition(TICKETS_NAME, KEY)
    instance.add_dynamic_partitions(TICKETS_NAME, [KEY])
    assert instance.has_dynamic_partition(TICKETS_NAME, KEY)  # the sensor's new key, at once
    assert instance.has_dynamic_partition(TICKETS_NAME, KEY)
    assert storage_queries[KEY] == 2
    instance.delete_dynamic_partition(TICKETS_NAME, KEY)
    assert not instance.has_dynamic_partition(TICKETS_NAME, KEY)
    assert storage_queries[KEY] == 3


def test_a_yes_is_asked_again_after_its_time_to_live(
    instance: dg.DagsterInstance,
    storage_queries: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(instance_module, "monotonic", lambda: now[0])
    instance.add_dynamic_partitions(TICKETS_NAME, [KEY])
    assert instance.has_dynamic_partition(TICKETS_NAME, KEY)
    now[0] += instance_module.KNOWN_PARTITION_TTL_S - 0.1
    assert instance.has_dynamic_partition(TICKETS_NAME, KEY)
    assert storage_queries[KEY] == 1
    # deleted in another process (behind this instance's back): seen once the answer expires
    instance.event_log_storage.delete_dynamic_partition(TICKETS_NAME, KEY)
    now[0] += 0.2
    assert not instance.has_dynamic_partition(TICKETS_NAME, KEY)
    assert storage_queries[KEY] == 2


def test_the_memory_keeps_at_most_its_bound_oldest_forgotten_first(
    instance: dg.DagsterInstance,
    storage_queries: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(instance_module, "KNOWN_PARTITIONS_REMEMBERED", 3)
    keys = [f"ENG-{n}" for n in range(4)]
    instance.add_dynamic_partitions(TICKETS_NAME, keys)
    for key in keys:
        assert instance.has_dynamic_partition(TICKETS_NAME, key)
    assert len(instance._known_partitions) == 3  # type: ignore[attr-defined]
    assert instance.has_dynamic_partition(TICKETS_NAME, keys[-1])  # remembered
    assert instance.has_dynamic_partition(TICKETS_NAME, keys[0])  # forgotten: asked again
    assert storage_queries == Counter({keys[0]: 2, keys[1]: 1, keys[2]: 1, keys[3]: 1})


def test_the_sqlite_event_log_keeps_one_engine_per_file_within_its_bound(
    instance: dg.DagsterInstance, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = instance.event_log_storage
    assert isinstance(storage, EngineReusingSqliteEventLogStorage)
    made: list[str] = []
    create = sqlalchemy.create_engine

    def counting_create(url: str, **kwargs: Any) -> Any:
        made.append(url)
        return create(url, **kwargs)

    monkeypatch.setattr(sqlite_storage, "create_engine", counting_create)
    result = _run_one_ticket(instance, tmp_path)
    events = instance.all_logs(result.run_id)
    assert len(events) > 50  # every one written and read back through the reused engines
    assert len(made) == len(set(made)) <= 2  # the run's file and the index, once each

    monkeypatch.setattr(sqlite_storage, "ENGINES_KEPT", 2)
    for n in range(3):
        assert storage.get_logs_for_run(f"{n:036d}") == []  # three more files: oldest disposed
    assert len(storage._engines) == 2  # type: ignore[attr-defined]
    storage.dispose()
    assert storage._engines == {}  # type: ignore[attr-defined]


def test_a_postgres_instance_keeps_dagsters_storage(tmp_path: Any) -> None:
    """Only the default (SQLite) storage is replaced; a named storage is Dagster's choice."""
    home = tmp_path / "pg"
    home.mkdir()
    shutil.copy(ROOT / "dagster.postgres.yaml", home / "dagster.yaml")
    ref = InstanceRef.from_dir(str(home))
    assert ref.custom_instance_class is VerandaInstance
    assert ref.storage_data.class_name == "DagsterPostgresStorage"  # type: ignore[union-attr]
