"""The checks gate the graph in the run itself, and every run is bounded like a ticket run.

A failing blocking check (red tests that passed on the base commit) stops ``patch`` in the
same run, with the pinned Dagster's partitioned checks; the warning-level PR check does not
block. A run launched without ``ticket_run``'s tags (the implicit asset job, as a backfill or
a UI materialization runs) is tagged with its ticket by the first phase it executes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.assets.fakes import ScriptedDomain, read_calls, resources
from veranda_dagster.assets import CHECKS, PHASE_ASSETS
from veranda_dagster.domain.core.models import CommandResult, ContextPack, RedTests, WorkOrder
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.resources.domain_calls import DOMAIN_CALLS_KEY

KEY = "ENG-31"
ROOT = Path(__file__).resolve().parents[2]


class GreenOnBaseDomain(ScriptedDomain):
    """Its red tests pass on the base commit: they prove nothing, so ``patch`` must not run."""

    def phase_red_tests(self, order: WorkOrder, context_pack: ContextPack) -> RedTests:
        red = super().phase_red_tests(order, context_pack)
        return red.model_copy(update={"base_run": CommandResult(command="pytest -q", exit_code=0)})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    return home


def implicit_asset_job(tmp_path: Path, domain: ScriptedDomain) -> dg.JobDefinition:
    res = resources(str(tmp_path), str(tmp_path / "values"))
    res[DOMAIN_CALLS_KEY] = domain
    defs = dg.Definitions(assets=PHASE_ASSETS, asset_checks=CHECKS, resources=res)
    return defs.resolve_implicit_global_asset_job_def()


def test_checks_that_gate_patch_are_blocking_and_the_pr_check_warns():
    blocking = {spec.key.name: spec.blocking for check in CHECKS for spec in check.check_specs}
    assert blocking == {
        "pack_within_bounds": True,
        "pack_citations_valid": True,
        "red_tests_fail_on_base": True,
        "pull_request_citations_resolve": False,
    }


def test_a_failing_blocking_check_stops_patch_in_the_same_run(tmp_path: Path, home: Path):
    job = implicit_asset_job(
        tmp_path, GreenOnBaseDomain(counter_dir=str(tmp_path), values_dir=str(tmp_path / "values"))
    )
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        instance.add_dynamic_partitions("tickets", [KEY])
        result = job.execute_in_process(partition_key=KEY, instance=instance, raise_on_error=False)
        assert not result.success
        evaluations = {
            e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data.passed
            for e in result.all_events
            if e.event_type_value == "ASSET_CHECK_EVALUATION"
        }
        assert evaluations["red_tests_fail_on_base"] is False
        assert evaluations["pack_within_bounds"] is True
        done = {
            e.asset_key.path[-1] for e in result.get_asset_materialization_events() if e.asset_key
        }
        assert done == {"ticket", "repo_guess", "context_pack", "red_tests"}
        # patch (and all after it) never ran: no model was paid for it
        calls = read_calls(tmp_path)
        assert calls["patch"] == 0 and calls["pull_request"] == 0
        assert calls["red_tests"] == 1

        # the implicit asset job carries no ticket_run tags; the first phase tagged the run
        run = instance.get_run_by_id(result.run_id)
        assert run is not None and run.tags[TICKET_TAG] == KEY
        found = instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: KEY}))
        assert [r.run_id for r in found] == [result.run_id]


def test_passing_checks_let_the_graph_run_and_its_metadata_reads_well(tmp_path: Path, home: Path):
    job = implicit_asset_job(
        tmp_path, ScriptedDomain(counter_dir=str(tmp_path), values_dir=str(tmp_path / "values"))
    )
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        instance.add_dynamic_partitions("tickets", [KEY])
        result = job.execute_in_process(partition_key=KEY, instance=instance)
        assert result.success
        assert read_calls(tmp_path)["patch"] == 1
        meta = {
            e.asset_key.path[-1]: e.step_materialization_data.materialization.metadata
            for e in result.get_asset_materialization_events()
            if e.asset_key
        }
    pr = meta["pull_request"]
    assert isinstance(pr["pr_url"], dg.UrlMetadataValue)
    assert isinstance(pr["pr_body"], dg.MarkdownMetadataValue)
    assert pr["pr_body"].value == "Fixes retries (C1)"
    assert isinstance(meta["review_rounds"]["verdicts"], dg.MarkdownMetadataValue)
    assert "| 1 | none | yes |" in meta["review_rounds"]["verdicts"].value
    red = meta["red_tests"]["red_test_output"]
    assert isinstance(red, dg.MarkdownMetadataValue) and "1 failed" in red.value
    files = meta["context_pack"]["files"]
    assert isinstance(files, dg.TableMetadataValue)
    assert [r.data["path"] for r in files.records] == ["api/retry.py"]
    patch = meta["patch"]
    assert "coverage_before_pct" not in patch and "coverage_before" not in patch  # not measured
    assert all(v.value != -1 for v in patch.values() if isinstance(v, dg.FloatMetadataValue))
    assert {"usd", "duration_s", "tokens_in", "tokens_out", "backend"} <= set(patch)
