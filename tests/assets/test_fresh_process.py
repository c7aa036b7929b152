"""A downstream phase materialized alone, in a fresh process, loads its upstream values."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import dagster as dg
from dagster._core.instance.ref import InstanceRef

from tests.assets.fakes import read_calls, resources
from tests.support.processes import ROOT, run_in_repo
from veranda_dagster.assets import PHASE_ASSETS
from veranda_dagster.domain.core.models import RedTests
from veranda_dagster.storage import ValueStore

KEY = "ENG-8"

CHILD = """
import json, sys
import dagster as dg
from tests.assets.fakes import resources
from veranda_dagster.assets import PHASE_ASSETS
calls, values = sys.argv[1], sys.argv[2]
with dg.DagsterInstance.get() as instance:
    result = dg.materialize(PHASE_ASSETS, selection="red_tests", partition_key="ENG-8",
                            instance=instance, resources=resources(calls, values))
    loaded = sorted(e.event_specific_data.input_name for e in result.all_events
                    if e.event_type_value == "LOADED_INPUT")
    print(json.dumps({"success": result.success, "run_id": result.run_id, "loaded": loaded}))
"""


def test_downstream_asset_alone_in_a_new_process_loads_upstream(tmp_path: Path):
    home, calls, values = tmp_path / "home", tmp_path / "calls", tmp_path / "values"
    for path in (home, calls, values):
        path.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        instance.add_dynamic_partitions("tickets", [KEY])
        upstream = PHASE_ASSETS[:3]  # ticket, repo_guess, context_pack
        first = dg.materialize(
            upstream,
            partition_key=KEY,
            instance=instance,
            resources=resources(str(calls), str(values), marker="from-first-process"),
        )
        assert first.success

    env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(ROOT)}
    child = run_in_repo([sys.executable, "-c", CHILD, str(calls), str(values)], env, timeout=120)
    assert child.returncode == 0, child.stderr[-3000:]
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["success"]
    assert report["loaded"] == ["context_pack"]  # the ticket rides in the pack's work order

    counts = read_calls(calls)
    assert counts == {"ticket": 1, "repo_guess": 1, "context_pack": 1, "red_tests": 1}
    red = ValueStore(base_dir=str(values)).load("red_tests", KEY)
    assert isinstance(red, RedTests)
    assert red.branch == "veranda/eng-8" and red.base_sha == "a" * 40  # from the stored pack
    assert red.test_files == [
        "tests/test_from-first-process.py"
    ]  # the stored ticket, not a refetch
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        run = instance.get_run_by_id(report["run_id"])
        assert run is not None and run.is_success
