"""The ``workspace_sweep`` sensor against a real instance: runs in flight are spared, a merged
or closed PR's clone goes, the bound holds oldest-first, and ``/metrics`` shows the outcome."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import cast

import dagster as dg
import pytest
from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.resources import forge_returning
from veranda_dagster.domain.clone import workspace_use
from veranda_dagster.domain.core.bounds import MAX_SWEEP_PR_CHECKS
from veranda_dagster.domain.core.forge_port import Forge, ForgePR
from veranda_dagster.observability.metrics import PhaseMetrics
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sensors.workspace_sweep import closed_pull_requests, workspace_sweep

MiB = 1024**2
HOUR = 3600.0


class OpenPRs:
    """A forge where only ``open`` branches have an open pull request."""

    def __init__(self, open_branches: set[str]) -> None:
        self.open = open_branches
        self.asked: list[tuple[str, str]] = []

    def find_pull_request(self, repo: str, head_branch: str) -> ForgePR | None:
        self.asked.append((repo, head_branch))
        if head_branch in self.open:
            return ForgePR(number=1, url="u", head_ref=head_branch)
        return None

    def close(self) -> None:
        pass


def _clone(root: Path, key: str, mib: int, hours_ago: float) -> None:
    folder = root / key / ".git"
    folder.mkdir(parents=True)
    (folder / "pack").write_bytes(os.urandom(mib * MiB))
    stamp = root / "_used" / key
    stamp.parent.mkdir(exist_ok=True)
    stamp.touch()
    when = time.time() - hours_ago * HOUR
    os.utime(stamp, (when, when))


def test_the_sweep_spares_runs_in_flight_removes_closed_prs_and_keeps_the_bound(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    _clone(root, "ENG-1", 3, hours_ago=50)  # oldest, but its run is in flight
    _clone(root, "ENG-2", 1, hours_ago=5)  # its PR was merged
    _clone(root, "ENG-3", 2, hours_ago=40)  # finished, PR open: goes for the bound
    _clone(root, "ENG-4", 2, hours_ago=3)  # finished, PR open, newest: stays
    forge = OpenPRs({"veranda/eng-3", "veranda/eng-4"})
    workspace = WorkspaceResource(root=str(root), max_total_bytes=6 * MiB)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tickets", ["ENG-1", "ENG-2", "ENG-3", "ENG-4"])
        instance.add_run(
            DagsterRun(
                job_name="ticket_run",
                run_id="r-1",
                status=DagsterRunStatus.STARTED,
                tags={TICKET_TAG: "ENG-1"},
            )
        )
        for key in ("ENG-2", "ENG-3", "ENG-4"):
            instance.report_runless_asset_event(
                dg.AssetMaterialization(
                    asset_key="pull_request",
                    partition=key,
                    metadata={"pr_url": f"https://github.com/acme/billing/pull/{key[-1]}"},
                )
            )
        context = dg.build_sensor_context(
            instance=instance,
            resources={
                "workspace": workspace,
                "forge": forge_returning(forge, token="ghp-test"),
            },
        )
        result = workspace_sweep(context)
        assert context.cursor == str(MAX_SWEEP_PR_CHECKS)  # the next tick asks the next ones
    assert "ENG-2 (closed)" in str(result) and "ENG-3 (size)" in str(result)
    assert sorted(p.name for p in root.iterdir() if p.name.startswith("ENG")) == [
        "ENG-1",
        "ENG-4",
    ]
    assert ("acme/billing", "veranda/eng-2") in forge.asked
    metrics = PhaseMetrics(workspaces_root=lambda: str(root))
    text = generate_latest(metrics.registry).decode()
    values = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for vendor in text_string_to_metric_families(text)
        for sample in vendor.samples
    }
    assert values[("veranda_workspace_bound_bytes", ())] == 6 * MiB
    assert values[("veranda_workspace_evictions_total", (("reason", "closed"),))] == 1
    assert values[("veranda_workspace_evictions_total", (("reason", "size"),))] == 1
    assert values[("veranda_workspace_over_bound", ())] == 0
    assert 5 * MiB <= values[("veranda_workspace_bytes", ())] <= 6 * MiB


def _parse(url: str) -> tuple[str, int] | None:
    return ("acme/billing", int(url.rsplit("/", 1)[1])) if "/pull/" in url else None


def _closed(
    instance: dg.DagsterInstance, keys: list[str], forge: OpenPRs, start: int = 0
) -> set[str]:
    """One tick's question to the forge (``OpenPRs`` answers the one method the sweep calls)."""
    return closed_pull_requests(instance, keys, cast(Forge, forge), _parse, start)


def test_a_tick_asks_at_most_its_bound_of_prs_and_the_next_tick_the_rest() -> None:
    """``MAX_SWEEP_PR_CHECKS``: with one ticket more than the bound whose PRs are all open, a
    tick asks the forge about exactly the bound and the next tick (``start`` advanced by the
    bound, as the sensor's cursor does) asks about the one left, so every ticket is asked in
    turn; its twin, exactly the bound of tickets, is asked whole in one tick."""
    keys = [f"ENG-{100 + i}" for i in range(MAX_SWEEP_PR_CHECKS + 1)]
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("tickets", keys)
        for n, key in enumerate(keys):
            instance.report_runless_asset_event(
                dg.AssetMaterialization(
                    asset_key="pull_request",
                    partition=key,
                    metadata={"pr_url": f"https://github.com/acme/billing/pull/{n}"},
                )
            )
        at_bound = OpenPRs({f"veranda/{k.lower()}" for k in keys[:-1]})
        assert _closed(instance, keys[:-1], at_bound) == set()
        assert {branch for _, branch in at_bound.asked} == at_bound.open
        forge = OpenPRs({f"veranda/{k.lower()}" for k in keys})
        _closed(instance, keys, forge)
        first = {branch for _, branch in forge.asked}
        assert len(forge.asked) == MAX_SWEEP_PR_CHECKS
        _closed(instance, keys, forge, start=MAX_SWEEP_PR_CHECKS)
    later = {branch for _, branch in forge.asked[MAX_SWEEP_PR_CHECKS:]}
    assert first != forge.open and first | later == forge.open


def _tick_with_no_open_prs(root: Path) -> str:
    """One sweep tick over ``root`` on a fresh instance, with a forge that has no open PRs."""
    with dg.instance_for_test() as instance:
        context = dg.build_sensor_context(
            instance=instance,
            resources={
                "workspace": WorkspaceResource(root=str(root)),
                "forge": forge_returning(OpenPRs(set()), token="ghp-test"),
            },
        )
        return str(workspace_sweep(context))


def test_a_sweep_past_its_measuring_bound_says_its_total_is_a_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MAX_WORKSPACE_SCAN_ENTRIES`` reached (here set below one clone's three entries): the
    tick's outcome says the bytes kept are a lower bound and where measuring stopped; its twin,
    a bound the folder does not reach, says no such thing."""
    root = tmp_path / "ws"
    _clone(root, "ENG-1", 0, hours_ago=1)
    monkeypatch.setattr(workspace_use, "MAX_WORKSPACE_SCAN_ENTRIES", 2)
    result = _tick_with_no_open_prs(root)
    assert "removed nothing; at least" in result and "measuring stopped at" in result
    monkeypatch.setattr(workspace_use, "MAX_WORKSPACE_SCAN_ENTRIES", 100)
    assert "at least" not in _tick_with_no_open_prs(root)
