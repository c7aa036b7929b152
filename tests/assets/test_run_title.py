"""Each ticket's runs carry its title (``veranda/title``), so the runs list says what a run is
about: the ``ticket`` phase tags its run, and a re-execution that starts past it copies the tag
from the ticket's earlier run. The title is hostile text: one scrubbed line, bounded."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from tests.assets import recon
from veranda_dagster.assets._run_title import MAX_TITLE_TAG_CHARS, TITLE_TAG, title_tag

KEY = "ENG-7"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def job_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    paths = {"home": tmp_path / "home", "calls": tmp_path / "calls", "values": tmp_path / "v"}
    for path in paths.values():
        path.mkdir()
    shutil.copy(ROOT / "dagster.yaml", paths["home"] / "dagster.yaml")
    monkeypatch.setenv(recon.COUNTER_ENV, str(paths["calls"]))
    monkeypatch.setenv(recon.VALUES_ENV, str(paths["values"]))
    monkeypatch.setenv(recon.FAIL_ONCE_ENV, "context_pack")
    return paths


def test_the_ticket_title_tags_its_run_and_the_rerun_from_failure(job_env) -> None:
    job = dg.reconstructable(recon.ticket_job)
    home = str(job_env["home"])
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(home)) as instance:
        instance.add_dynamic_partitions("tickets", [KEY])
        with dg.execute_job(job, instance, tags={"dagster/partition": KEY}) as first:
            assert not first.success  # context_pack fails once, after ticket tagged the run
            first_id = first.run_id
        run = instance.get_run_by_id(first_id)
        assert run is not None
        title = run.tags[TITLE_TAG]
        assert title.startswith("Fix retries")  # the ticket's words, not its key

        options = dg.ReexecutionOptions.from_failure(first_id, instance)
        tags = {"dagster/partition": KEY}
        with dg.execute_job(job, instance, reexecution_options=options, tags=tags) as second:
            assert second.success
            steps = {e.step_key for e in second.all_events if e.is_step_success}
            assert "ticket" not in steps  # loaded, not recomputed: the tag was copied
            rerun = instance.get_run_by_id(second.run_id)
            assert rerun is not None and rerun.tags[TITLE_TAG] == title


def test_a_hostile_title_is_one_scrubbed_bounded_line() -> None:
    secret = "ghp_" + "a" * 36
    shown = title_tag(f"Fix it\n\nnow {secret} " + "x" * 500)
    assert "\n" not in shown and secret not in shown
    assert len(shown) == MAX_TITLE_TAG_CHARS and shown.endswith("…")
    assert title_tag("  Fix the   retry bug ") == "Fix the retry bug"
