"""Every run of the phase graph executes its steps in the run worker's process (no interpreter
per step), whoever launches it; a run can still ask for another executor."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.assets import recon
from tests.assets.fakes import read_calls, read_pids
from veranda_dagster import definitions
from veranda_dagster.assets._policy import PHASES
from veranda_dagster.executor import _default_in_process, phase_executor
from veranda_dagster.partitions import TICKET_JOB
from veranda_dagster.sim.driver import run_config

KEY = "ENG-19"


def test_ticket_run_and_the_implicit_asset_job_use_the_product_executor():
    defs = definitions.build_definitions()
    assert defs.resolve_job_def(TICKET_JOB).executor_def is phase_executor
    # backfills and UI materializations run on the implicit asset job, not on ticket_run
    assert defs.resolve_implicit_global_asset_job_def().executor_def is phase_executor
    assert "execution" not in run_config()  # the demo's driver takes the same default


def test_run_config_still_chooses_another_executor():
    assert _default_in_process({}) == {"in_process": {}}
    forked = {"multiprocess": {"start_method": {"forkserver": {}}, "max_concurrent": 2}}
    assert _default_in_process(forked) == forked


@pytest.fixture
def job_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    return recon.job_env(tmp_path, monkeypatch)


def test_a_run_executes_every_step_in_the_run_process(job_env):
    import os

    job = dg.reconstructable(recon.product_executor_ticket_job)
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(job_env["home"]))) as instance:
        instance.add_dynamic_partitions("tickets", [KEY])
        with dg.execute_job(job, instance, tags={"dagster/partition": KEY}) as result:
            assert result.success
            engine = [e.message or "" for e in result.all_events if e.is_engine_event]
    assert not any("multiprocess executor" in message for message in engine)
    assert set(read_calls(job_env["calls"])) == set(PHASES)
    assert {pid for pid, _ in read_pids(job_env["calls"]).values()} == {os.getpid()}
