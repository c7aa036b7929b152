"""The spend-accuracy and import-cycle benchmark scripts, run small through their real entry
points so neither can rot unseen (``test_every_script_runs`` requires each script be loaded)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.benchmarks.scripts import load_script
from veranda_dagster.sim.sample_org import create_sample_org


def test_import_cycles_finds_no_two_way_package_pair_and_no_module_cycle(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cycles = load_script("import_cycles")
    assert cycles.main() == 0
    out = capsys.readouterr().out
    assert "two-way package pairs: 0" in out, out
    assert "module import cycles: 0" in out, out  # the last two, in sim/, went with issue 31


def test_spend_accuracy_measures_one_scenario_with_the_ledger_equal_to_the_bill() -> None:
    spend = load_script("spend_accuracy")
    with tempfile.TemporaryDirectory(prefix="veranda-spend-test-") as tmp:
        root = Path(tmp)
        org = create_sample_org(root / "org")
        after = spend.measure("failing_follow_up_x5", "bwrap", org, root / "after")
    assert after["billed_usd"] > 0
    assert after["ledger_usd"] == pytest.approx(after["billed_usd"])
