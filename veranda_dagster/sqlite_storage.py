"""Dagster's SQLite storage with one SQLAlchemy engine per event-log file instead of one per
connection: the storage ``VerandaInstance`` uses when ``dagster.yaml`` names none (the shipped
single-machine instance; PostgreSQL, ``dagster.postgres.yaml``, is untouched).

Dagster's ``SqliteEventLogStorage`` creates a new engine for every connection it opens, about
660 per ticket run (each event written opens one or more), and an engine carries SQLAlchemy's
compiled-statement cache, so every statement was compiled afresh each time. Measured paired with
``benchmarks/run_execution.py``, that was about a quarter of a run's orchestration CPU
(docs/benchmarks.md). Here each file (the run's own shard, the cross-run index) keeps its
engine. The engines keep Dagster's ``NullPool``: no connection outlives its ``with`` block, so
what SQLite sees (one connection per write, under Dagster's own lock, its busy timeout) is as
before; only the engine object, and its statement cache, is reused. At most
``ENGINES_KEPT`` engines per storage, the least recently used disposed first, so a daemon or
webserver that reads thousands of runs' files holds a bounded number.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage, _event_logs_directory
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

ENGINES_KEPT = 32
"""Bound on the engines one event-log storage keeps (a run worker needs two: its run's file and
the index)."""


class EngineReusingSqliteEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` whose ``_connect`` reuses the file's engine."""

    def __init__(self, base_dir: str, inst_data: Any = None) -> None:
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._engines_lock = threading.Lock()
        super().__init__(base_dir, inst_data)

    def _engine(self, shard: str) -> Engine:
        with self._engines_lock:
            engine = self._engines.get(shard)
            if engine is None:
                engine = create_engine(
                    self.conn_string_for_shard(shard),
                    poolclass=NullPool,
                    connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
                )
                self._engines[shard] = engine
                while len(self._engines) > ENGINES_KEPT:
                    _, oldest = self._engines.popitem(last=False)
                    oldest.dispose()
            self._engines.move_to_end(shard)
            return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        # Dagster's own body, less the engine made and disposed per call
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def dispose(self) -> None:
        super().dispose()
        with self._engines_lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()


class VerandaSqliteStorage(DagsterSqliteStorage):
    """Dagster's default SQLite storage (runs, event logs, schedules under one directory) with
    the engine-reusing event log."""

    def __init__(self, base_dir: str, inst_data: Any = None) -> None:
        super().__init__(base_dir, inst_data)
        self._event_log_storage = EngineReusingSqliteEventLogStorage(
            _event_logs_directory(base_dir)
        )

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> VerandaSqliteStorage:
        # Dagster's names its own class here; a subclass must build itself
        return cls.from_local(inst_data=inst_data, **config_value)
