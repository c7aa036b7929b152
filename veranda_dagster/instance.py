"""The Dagster instance every Veranda process opens (``instance_class`` in ``dagster.yaml``):
Dagster's own, remembering for a while that a ticket partition exists.

Executing one ticket run, Dagster asks the instance whether the run's ticket is a partition of
``tickets`` about 140 times (each input's and output's partition subset is built by checking its
key range against the dynamic partitions), one query each, and on SQLite each query also
inspects the schema (``has_table``) over a fresh connection: about 0.5 of a run's 2 CPU-s of
orchestration (docs/benchmarks.md, "Where a ticket's orchestration CPU goes"). The answer does
not change during the run: the sensors add ticket keys and nothing in the product deletes one.

So a *yes* is remembered for ``KNOWN_PARTITION_TTL_S`` (the question is asked again after that,
so a partition deleted by hand, in another process, is seen within that long), at most
``KNOWN_PARTITIONS_REMEMBERED`` keys (the oldest forgotten first), and a delete through this
instance forgets the key at once. A *no* is never remembered: a key the sensor adds a moment
later must be seen at once.

Where ``dagster.yaml`` names no storage (the shipped single-machine instance), the default is
Dagster's SQLite storage with an event log that keeps one engine per file
(``sqlite_storage.py``); a named storage (PostgreSQL) is Dagster's own. Everything else is
Dagster's instance unchanged, and this module imports nothing of the product: every process
that opens the instance (daemon, webserver, code server, run worker, CLI) loads it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from time import monotonic
from typing import Any

import dagster as dg
import yaml
from dagster._core.instance.ref import InstanceRef
from dagster._serdes import ConfigurableClassData

KNOWN_PARTITION_TTL_S = 30.0
"""How long a partition found to exist is taken to exist without asking again."""

KNOWN_PARTITIONS_REMEMBERED = 256
"""Bound on the keys remembered per instance (a run worker needs one: its ticket's)."""

SQLITE_STORAGE_MODULE = "veranda_dagster.sqlite_storage"
"""Where the default (SQLite) storage lives; named, not imported, so a PostgreSQL instance never
loads it."""


class VerandaInstance(dg.DagsterInstance):
    """``DagsterInstance`` whose ``has_dynamic_partition`` remembers a *yes* for a while and
    whose default storage reuses its SQLite engines."""

    @classmethod
    def config_schema(cls) -> dict[str, Any]:
        """No settings of its own (Dagster asks a custom instance class for them)."""
        return {}

    @classmethod
    def config_defaults(cls, base_dir: str) -> Mapping[str, Any]:
        """Dagster's own defaults, asked of a custom class too, except the storage used when
        ``dagster.yaml`` names none: Dagster's SQLite storage under ``base_dir`` with an event
        log that keeps one engine per file (``sqlite_storage.py``)."""
        return {
            **InstanceRef.config_defaults(base_dir),
            "storage": ConfigurableClassData(
                SQLITE_STORAGE_MODULE,
                "VerandaSqliteStorage",
                yaml.dump({"base_dir": base_dir}, default_flow_style=False),
            ),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._known_partitions: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._known_partitions_lock = threading.Lock()

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        key = (partitions_def_name, partition_key)
        now = monotonic()
        with self._known_partitions_lock:
            seen_at = self._known_partitions.get(key)
            if seen_at is not None and now - seen_at < KNOWN_PARTITION_TTL_S:
                return True
        exists = super().has_dynamic_partition(partitions_def_name, partition_key)
        with self._known_partitions_lock:
            if exists:
                self._known_partitions[key] = now
                self._known_partitions.move_to_end(key)
                while len(self._known_partitions) > KNOWN_PARTITIONS_REMEMBERED:
                    self._known_partitions.popitem(last=False)
            else:
                self._known_partitions.pop(key, None)
        return exists

    def delete_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> None:
        super().delete_dynamic_partition(partitions_def_name, partition_key)
        with self._known_partitions_lock:
            self._known_partitions.pop((partitions_def_name, partition_key), None)
