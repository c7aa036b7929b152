"""Issue 38: a ticket's clone borrows its repository's shared store instead of copying it.

* the clone's ``objects/info/alternates`` names the store, and only because the product
  recorded the borrow (``borrowed_objects``): a rewritten alternates file is put back;
* every sandboxed command in the clone sees the store read-only at its own path: git log,
  diff and commit work there (and fail without the bind, so the bind is what makes them work),
  push sends the borrowed objects, and a write into the store fails on the read-only mount;
* a second ticket's clone costs a small fraction of the first's bytes;
* the sweep never removes a store a clone borrows from, and the store survives a restart.

The sandbox is required throughout (``VERANDA_SANDBOX=bwrap``), never ``off``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.context.gitrepo import git
from veranda_dagster.domain.clone import borrowed_objects, git_command
from veranda_dagster.domain.clone.borrowed_objects import borrowed_store, borrowers
from veranda_dagster.domain.clone.object_cache import ObjectCache
from veranda_dagster.domain.clone.workspace import GitError
from veranda_dagster.domain.clone.workspace_eviction import plan_sweep
from veranda_dagster.domain.clone.workspace_use import (
    USED_DIR,
    Inventory,
    StoreEntry,
    WorkspaceEntry,
    inventory,
)
from veranda_dagster.domain.work.validation import run_command
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sim.sample_org import BILLING, LEDGER, create_sample_org

MiB = 1024**2
NOW = 2_000_000_000.0


@pytest.fixture(autouse=True)
def sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")


def _du(*paths: Path) -> int:
    """Allocated bytes under ``paths``, as ``du`` counts them."""
    total = 0
    for path in paths:
        for top, _dirs, files in os.walk(path):
            total += os.lstat(top).st_blocks * 512
            total += sum(os.lstat(os.path.join(top, f)).st_blocks * 512 for f in files)
    return total


def test_the_clone_borrows_the_store_and_sandboxed_git_reads_commits_and_pushes(
    tmp_path: Path,
) -> None:
    org = create_sample_org(tmp_path / "org")
    bare = org.bare(BILLING)
    work = WorkspaceResource(root=str(tmp_path / "ws")).clone("ENG-1", str(bare))
    work.ensure()
    store = borrowed_store(work.path)
    assert store is not None and store.parent.name == "_objects"
    alternates = work.path / ".git/objects/info/alternates"
    assert alternates.read_text() == f"{store / 'objects'}\n"
    assert not list((work.path / ".git/objects/pack").glob("*.pack"))  # nothing copied
    # sandboxed git (the product's seam) reads history through the store...
    assert work.git("log", "--format=%s", "-1") == git(bare, "log", "--format=%s", "-1", "main")
    (work.path / "borrowed.txt").write_text("new\n")
    head = work.commit_all("a change in a clone that borrows its objects")
    assert "borrowed.txt" in work.diff(f"origin/{work.default_branch()}")
    # ...and push sends what the forge lacks, read through the alternates outside the sandbox
    work.push()
    assert git(bare, "rev-parse", work.branch) == head


def test_without_the_read_only_bind_sandboxed_git_cannot_read_the_borrowed_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = create_sample_org(tmp_path / "org")
    work = WorkspaceResource(root=str(tmp_path / "ws")).clone("ENG-1", str(org.bare(BILLING)))
    work.ensure()
    monkeypatch.setattr(git_command, "store_binds", lambda repo_dir: {})
    with pytest.raises(GitError):
        work.git("log", "-1")


def test_sandboxed_code_cannot_write_the_shared_store(tmp_path: Path) -> None:
    org = create_sample_org(tmp_path / "org")
    work = WorkspaceResource(root=str(tmp_path / "ws")).clone("ENG-1", str(org.bare(BILLING)))
    work.ensure()
    store = borrowed_store(work.path)
    assert store is not None
    planted = store / "objects" / "planted"
    packs = sorted(p.name for p in (store / "objects" / "pack").iterdir())
    attack = (
        f"ls {store}/objects/pack >/dev/null && echo visible; "
        f"echo x > {planted}; rm -f {store}/objects/pack/*; echo attempted"
    )
    result = run_command(attack, work.path, timeout_s=60)
    assert result.sandboxed
    assert "visible" in result.output_tail  # the store is there, at its own path...
    assert "Read-only file system" in result.output_tail  # ...and refuses the write
    assert not planted.exists()
    assert sorted(p.name for p in (store / "objects" / "pack").iterdir()) == packs
    assert work.git("log", "--format=%H", "-1")  # the clone still reads it


def test_a_rewritten_alternates_file_is_put_back_and_other_stores_stay_unseen(
    tmp_path: Path,
) -> None:
    org = create_sample_org(tmp_path / "org")
    resource = WorkspaceResource(root=str(tmp_path / "ws"))
    ledger = resource.clone("ENG-2", str(org.bare(LEDGER)))
    ledger.ensure()
    work = resource.clone("ENG-1", str(org.bare(BILLING)))
    work.ensure()
    own, other = borrowed_store(work.path), borrowed_store(ledger.path)
    assert own is not None and other is not None and own != other
    alternates = work.path / ".git/objects/info/alternates"
    alternates.write_text(f"{other / 'objects'}\n")  # what code with .git access might do
    peek = run_command(f"cat {other}/HEAD", work.path, timeout_s=60)
    assert not peek.ok and "No such file" in peek.output_tail  # another repo's store: unseen
    work.pin_origin()  # before every transport command
    assert alternates.read_text() == f"{own / 'objects'}\n"
    # a record that names something else than a store under _objects is ignored
    borrowed_objects.record_path(work.path).write_text("../../etc")
    assert borrowed_store(work.path) is None and borrowed_objects.store_binds(work.path) == {}


def test_a_second_tickets_clone_costs_a_small_fraction_of_the_first(tmp_path: Path) -> None:
    """A history whose objects outweigh its work tree (as any real repository's do): 40
    revisions of 64 KiB of random bytes."""
    origin = tmp_path / "origin.git"
    dev = tmp_path / "dev"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(dev)], check=True, capture_output=True)
    for i in range(40):
        (dev / "blob.bin").write_bytes(os.urandom(64 * 1024))
        git(dev, "add", "-A")
        git(dev, "commit", "-qm", f"rev {i}")
    git(dev, "push", "-q", "origin", "HEAD:main")
    root = tmp_path / "ws"
    resource = WorkspaceResource(root=str(root))
    first = resource.clone("ENG-1", str(origin))
    first.ensure()
    second = resource.clone("ENG-2", str(origin))
    second.ensure()
    (store,) = ObjectCache(root / "_objects").stores()
    first_cost = _du(store, first.path)  # the first ticket pays for the store
    second_cost = _du(second.path)
    assert second_cost < first_cost / 10, (second_cost, first_cost)
    assert second.base_sha() == git(origin, "rev-parse", "main")


def test_the_sweep_never_removes_a_store_a_clone_borrows_from(tmp_path: Path) -> None:
    org = create_sample_org(tmp_path / "org")
    root = tmp_path / "ws"
    resource = WorkspaceResource(root=str(root))
    for key in ("ENG-1", "ENG-2"):
        resource.clone(key, str(org.bare(BILLING))).ensure()
    (store,) = ObjectCache(root / "_objects").stores()
    assert borrowers(root) == {store.name: {"ENG-1", "ENG-2"}}
    for key in ("ENG-1", "ENG-2"):  # both finished long ago
        os.utime(root / USED_DIR / key, (NOW - 86_400,) * 2)
    found = inventory(root)
    assert [(s.name, s.borrowers) for s in found.stores] == [
        (store.name, frozenset({"ENG-1", "ENG-2"}))
    ]
    # a bound of nothing, ENG-1 running: ENG-2 goes, the store ENG-1 borrows stays
    plan = WorkspaceResource(root=str(root), max_total_bytes=0).sweep(NOW, in_progress={"ENG-1"})
    assert [e.ticket_id for e in plan.evict] == ["ENG-2"] and plan.evict_stores == []
    assert store.is_dir() and plan.over_bound
    running = resource.clone("ENG-1", str(org.bare(BILLING)))
    assert running.git("log", "--format=%H", "-1")  # its borrowed objects are all there
    # once no clone names it, the store goes too (and is made again by the next ticket)
    plan = WorkspaceResource(root=str(root), max_total_bytes=0).sweep(NOW)
    assert [s.name for s in plan.evict_stores] == [store.name] and not store.exists()
    assert borrowers(root) == {}
    again = resource.clone("ENG-3", str(org.bare(BILLING)))
    again.ensure()
    assert again.git("log", "--format=%H", "-1")


def test_store_removal_decides_again_under_the_lock(tmp_path: Path) -> None:
    org = create_sample_org(tmp_path / "org")
    root = tmp_path / "ws"
    WorkspaceResource(root=str(root)).clone("ENG-1", str(org.bare(BILLING))).ensure()
    cache = ObjectCache(root / "_objects")
    (store,) = cache.stores()
    assert not cache.remove_unborrowed(store)  # a plan made before ENG-1 recorded its borrow
    assert store.is_dir()


def test_plan_keeps_borrowed_stores_and_takes_unborrowed_ones_oldest_first() -> None:
    found = Inventory(
        [WorkspaceEntry("ENG-1", 10 * MiB, NOW - 60)],  # just used: kept
        other_bytes=0,
        stores=[
            StoreEntry("a.git", 100 * MiB, NOW - 10, frozenset({"ENG-1"})),
            StoreEntry("b.git", 100 * MiB, NOW - 50),
            StoreEntry("c.git", 100 * MiB, NOW - 40),
        ],
    )
    plan = plan_sweep(found, max_bytes=150 * MiB, max_age_s=1e9, now=NOW)
    assert [s.name for s in plan.evict_stores] == ["b.git", "c.git"]
    assert plan.total_bytes == 110 * MiB and not plan.over_bound


def test_the_store_and_a_borrowing_clone_survive_a_worker_restart(tmp_path: Path) -> None:
    org = create_sample_org(tmp_path / "org")
    root = tmp_path / "ws"
    WorkspaceResource(root=str(root)).clone("ENG-1", str(org.bare(BILLING))).ensure()
    (store,) = ObjectCache(root / "_objects").stores()
    inode = store.stat().st_ino
    # a restart: fresh objects over the same folder, nothing carried in memory
    after = WorkspaceResource(root=str(root)).clone("ENG-1", str(org.bare(BILLING)))
    after.ensure()
    assert store.stat().st_ino == inode and borrowed_store(after.path) == store
    assert after.git("log", "--format=%H", "-1") == git(org.bare(BILLING), "rev-parse", "main")
