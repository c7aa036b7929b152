"""A module-level job for ``dg.reconstructable``: execute_job and re-execution load it by
pointer, the way a run worker does, with the counting fake configured from the environment."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

from tests.assets.fakes import fake_definitions
from veranda_dagster.partitions import TICKET_JOB

COUNTER_ENV = "VERANDA_TEST_COUNTER_DIR"
VALUES_ENV = "VERANDA_TEST_VALUES_DIR"
FAIL_ONCE_ENV = "VERANDA_TEST_FAIL_ONCE"
ROOT = Path(__file__).resolve().parents[2]


def job_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A ``DAGSTER_HOME`` with the shipped ``dagster.yaml`` and the counting fake's folders,
    named in the environment these jobs read: what a test that executes them by pointer needs."""
    paths = {"home": tmp_path / "home", "calls": tmp_path / "calls", "values": tmp_path / "v"}
    for path in paths.values():
        path.mkdir()
    shutil.copy(ROOT / "dagster.yaml", paths["home"] / "dagster.yaml")
    monkeypatch.setenv(COUNTER_ENV, str(paths["calls"]))
    monkeypatch.setenv(VALUES_ENV, str(paths["values"]))
    return paths


def ticket_job() -> dg.JobDefinition:
    defs = fake_definitions(
        os.environ[COUNTER_ENV],
        os.environ[VALUES_ENV],
        fail_once=os.environ.get(FAIL_ONCE_ENV, ""),
    )
    return defs.resolve_job_def(TICKET_JOB)


def product_executor_ticket_job() -> dg.JobDefinition:
    """The same fake graph on the product's executor (``veranda_dagster.executor``)."""
    from veranda_dagster.executor import phase_executor

    defs = fake_definitions(
        os.environ[COUNTER_ENV], os.environ[VALUES_ENV], executor=phase_executor
    )
    return defs.resolve_job_def(TICKET_JOB)


def old_run_ticket_job() -> dg.JobDefinition:
    """``ticket_job`` under its own pointer: a process caches a reconstructable job's
    definition by pointer, so a second test reusing ``ticket_job`` would get the first one's
    counter directory and failing phase."""
    return ticket_job()
