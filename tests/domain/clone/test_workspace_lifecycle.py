"""Issue 38: workspaces with a lifecycle.

* one object store per repository, shared by its tickets' clones: the second ticket's clone
  borrows from the store (the forge is asked only for what changed), and the store survives a
  worker restart (a fresh ``WorkspaceResource`` over the same folder reuses it);
* the sweep keeps the total within its bound, oldest finished first, removes closed-PR and
  stale clones, and never removes a clone whose run is in progress.

Git runs for real (sandboxed where the product sandboxes it: ``VERANDA_SANDBOX=bwrap``).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.fixtures.context.gitrepo import git
from veranda_dagster.domain.clone import workspace_use
from veranda_dagster.domain.clone.object_cache import ObjectCache
from veranda_dagster.domain.clone.workspace_eviction import plan_sweep
from veranda_dagster.domain.clone.workspace_use import (
    USED_DIR,
    Inventory,
    WorkspaceEntry,
    inventory,
)
from veranda_dagster.domain.core.bounds import MAX_WORKSPACE_BYTES
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sim.sample_org import BILLING, create_sample_org

NOW = 2_000_000_000.0
DAY = 86_400.0
MiB = 1024**2


@pytest.fixture(autouse=True)
def sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")


def _push_commit(bare: Path, scratch: Path, name: str) -> str:
    """A new commit on the forge's main, as another developer would push it."""
    work = scratch / f"dev-{name}"
    subprocess.run(["git", "clone", "-q", str(bare), str(work)], check=True)
    (work / f"{name}.txt").write_text(name)
    git(work, "add", "-A")
    git(work, "commit", "-qm", name)
    git(work, "push", "-q", "origin", "HEAD:main")
    return git(work, "rev-parse", "HEAD")


def test_tickets_of_one_repository_share_its_store_and_it_survives_a_restart(
    tmp_path: Path,
) -> None:
    org = create_sample_org(tmp_path / "org")
    bare = org.bare(BILLING)
    root = tmp_path / "ws"
    first = WorkspaceResource(root=str(root)).clone("ENG-1", str(bare))
    first.ensure()
    stores = ObjectCache(root / "_objects").stores()
    assert len(stores) == 1
    store = stores[0]
    inode = store.stat().st_ino
    # the clone borrows the store's objects (``test_borrowed_objects``); origin is the forge
    alternates = first.path / ".git/objects/info/alternates"
    assert alternates.read_text() == f"{store / 'objects'}\n"
    assert git(first.path, "remote", "get-url", "origin") == str(bare)

    new_sha = _push_commit(bare, tmp_path, "later")
    # a worker restart: a fresh resource over the same folder
    second = WorkspaceResource(root=str(root)).clone("ENG-2", str(bare))
    second.ensure()
    assert ObjectCache(root / "_objects").stores() == [store]
    assert store.stat().st_ino == inode  # the same store, kept, not made again
    assert git(store, "rev-parse", "refs/heads/main") == new_sha  # kept fresh from the forge
    assert second.base_sha() == new_sha
    # the second clone reads the store's objects: the first commit too
    assert git(second.path, "cat-file", "-t", first.base_sha()) == "commit"


def test_a_half_made_store_is_made_again(tmp_path: Path) -> None:
    org = create_sample_org(tmp_path / "org")
    cache = ObjectCache(tmp_path / "objects")
    store = cache.store_for(str(org.bare(BILLING)))
    store.mkdir(parents=True)
    (store / "garbage").write_text("a killed clone left this")
    made = cache.refresh(str(org.bare(BILLING)))
    assert made == store and (store / "HEAD").is_file() and not (store / "garbage").exists()


def test_a_planted_link_in_the_store_is_refused(tmp_path: Path) -> None:
    org = create_sample_org(tmp_path / "org")
    cache = ObjectCache(tmp_path / "objects")
    store = cache.refresh(str(org.bare(BILLING)))
    (store / "hooks").mkdir(exist_ok=True)
    (store / "hooks" / "evil").symlink_to("/etc/passwd")
    with pytest.raises(Exception, match="link or a special file"):
        cache.refresh(str(org.bare(BILLING)))


# --- eviction ---------------------------------------------------------------------------------


def _entries(*rows: tuple[str, int, float]) -> Inventory:
    return Inventory([WorkspaceEntry(t, b * MiB, used) for t, b, used in rows], other_bytes=0)


def test_eviction_keeps_the_bound_oldest_finished_first() -> None:
    found = _entries(
        ("ENG-1", 100, NOW - 5 * DAY),
        ("ENG-2", 100, NOW - 4 * DAY),
        ("ENG-3", 100, NOW - 3 * DAY),
        ("ENG-4", 100, NOW - 2 * DAY),
    )
    plan = plan_sweep(found, max_bytes=250 * MiB, max_age_s=30 * DAY, now=NOW)
    assert [(e.ticket_id, e.reason) for e in plan.evict] == [("ENG-1", "size"), ("ENG-2", "size")]
    assert plan.total_bytes == 200 * MiB and not plan.over_bound


@pytest.mark.parametrize(("over", "evicted"), [(0, []), (1, ["ENG-1"])])
def test_the_default_bound_is_max_workspace_bytes_hit_to_the_byte(
    monkeypatch: pytest.MonkeyPatch, over: int, evicted: list[str]
) -> None:
    """``MAX_WORKSPACE_BYTES``: with no setting, the worker's folder may hold exactly that many
    bytes (nothing goes); one byte more and the oldest finished clone goes for the size."""
    monkeypatch.delenv("VERANDA_WORKSPACES_MAX_BYTES", raising=False)
    bound = WorkspaceResource.from_env().max_total_bytes
    assert bound == MAX_WORKSPACE_BYTES
    half = MAX_WORKSPACE_BYTES // 2
    found = Inventory(
        [
            WorkspaceEntry("ENG-1", half, NOW - 3 * DAY),
            WorkspaceEntry("ENG-2", MAX_WORKSPACE_BYTES - half + over, NOW - 2 * DAY),
        ],
        0,
    )
    plan = plan_sweep(found, max_bytes=bound, max_age_s=30 * DAY, now=NOW)
    assert [e.ticket_id for e in plan.evict] == evicted


def test_eviction_never_removes_a_workspace_whose_run_is_in_progress() -> None:
    found = _entries(
        ("ENG-1", 300, NOW - 9 * DAY),  # the oldest, but its run is in flight
        ("ENG-2", 100, NOW - 60),  # used a minute ago: inside the grace period
        ("ENG-3", 100, NOW - 2 * DAY),
    )
    plan = plan_sweep(
        found,
        max_bytes=100 * MiB,
        max_age_s=7 * DAY,
        now=NOW,
        in_progress={"ENG-1"},
    )
    assert [e.ticket_id for e in plan.evict] == ["ENG-3"]
    assert plan.over_bound  # what is left is all protected: said, not removed


def test_closed_pull_requests_and_stale_clones_go_even_under_the_bound() -> None:
    found = _entries(
        ("ENG-1", 1, NOW - 1 * DAY),
        ("ENG-2", 1, NOW - 20 * DAY),
        ("ENG-3", 1, NOW - 2 * DAY),
    )
    plan = plan_sweep(found, max_bytes=10**12, max_age_s=14 * DAY, now=NOW, closed={"ENG-3"})
    assert sorted((e.ticket_id, e.reason) for e in plan.evict) == [
        ("ENG-2", "age"),
        ("ENG-3", "closed"),
    ]


def test_the_sweep_removes_real_clones_within_the_bound_and_spares_the_running_one(
    tmp_path: Path,
) -> None:
    org = create_sample_org(tmp_path / "org")
    root = tmp_path / "ws"
    resource = WorkspaceResource(root=str(root))
    for key in ("ENG-1", "ENG-2", "ENG-3"):
        resource.clone(key, str(org.bare(BILLING))).ensure()
    for age, key in enumerate(("ENG-1", "ENG-2", "ENG-3")):  # ENG-1 used longest ago
        stamp = root / USED_DIR / key
        os.utime(stamp, (time.time() - (10 - age) * 3600,) * 2)
    found = inventory(root)
    clone_bytes = {c.ticket_id: c.bytes for c in found.clones}
    store_bytes = sum(s.bytes for s in found.stores)
    assert set(clone_bytes) == {"ENG-1", "ENG-2", "ENG-3"} and store_bytes > 0
    # room for the stores and one clone: ENG-1 runs (protected), so ENG-2 and ENG-3 go
    bound = found.other_bytes + store_bytes + clone_bytes["ENG-1"] + clone_bytes["ENG-3"] // 2
    bounded = WorkspaceResource(root=str(root), max_total_bytes=bound)
    plan = bounded.sweep(time.time(), in_progress={"ENG-1"})
    assert {e.ticket_id for e in plan.evict} == {"ENG-2", "ENG-3"}
    assert (root / "ENG-1" / ".git").is_dir()
    assert not (root / "ENG-2").exists() and not (root / "ENG-3").exists()
    assert inventory(root).total_bytes <= bound
    assert ObjectCache(root / "_objects").stores()  # the shared store is not a ticket's clone
    # a later ticket of an evicted one recreates its clone from the store
    again = resource.clone("ENG-2", str(org.bare(BILLING)))
    again.ensure()
    assert again.current_branch() == "veranda/eng-2"


def test_inventory_walk_is_bounded(tmp_path: Path) -> None:
    """The walk's budget, hit exactly: a clone folder and its 50 files are 51 entries; a budget
    of 51 measures them all and says so, 50 stops one short and says the total is a floor."""
    clone = tmp_path / "ENG-1"
    clone.mkdir()
    for i in range(50):
        (clone / f"f{i}").write_text("x")
    assert inventory(tmp_path, budget=51).complete
    found = inventory(tmp_path, budget=50)
    assert not found.complete  # the walk stopped at its bound and says so
    assert found.total_bytes < inventory(tmp_path, budget=51).total_bytes


@pytest.mark.parametrize(("bound", "measured_all"), [(51, True), (50, False)])
def test_the_sweep_measures_at_most_max_workspace_scan_entries_and_says_when_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: int, measured_all: bool
) -> None:
    """``MAX_WORKSPACE_SCAN_ENTRIES`` (here the 51 entries of one clone, or one fewer) is the
    walk the sweep makes: past it the plan says its total is a lower bound."""
    clone = tmp_path / "ENG-1"
    clone.mkdir()
    for i in range(50):
        (clone / f"f{i}").write_text("x")
    monkeypatch.setattr(workspace_use, "MAX_WORKSPACE_SCAN_ENTRIES", bound)
    plan = WorkspaceResource(root=str(tmp_path)).sweep(time.time())
    assert plan.measured_all is measured_all and plan.evict == []
