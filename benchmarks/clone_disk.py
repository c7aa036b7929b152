"""Disk and wall time of ticket clones: copied from the shared store (before) or borrowing it.

Issue 38: every ticket's clone used to be a full local copy of its repository's shared store
(``git clone --no-hardlinks``); now it borrows the store through ``objects/info/alternates``.
This measures, on a real repository given as a local bare origin, N tickets' clones made:

* ``copy``: the former way, a plain ``git clone --no-checkout --no-hardlinks store`` plus a
  checkout (no sandbox: the plain anchor of the old cost);
* ``borrow_plain``: plain ``git clone --shared store`` plus a checkout, no sandbox (the strongest
  plain anchor of the new way);
* ``product``: ``WorkspaceResource.clone(...).ensure()``, the product's own path (record,
  refresh, shared clone, sandboxed checkout, fetch, branch).

Bytes are allocated blocks (as ``du``) of each clone folder; the store is reported apart (paid
once per repository, by the first ticket). Wall time per clone is the median of the N.

    python benchmarks/clone_disk.py --origin /work/.mirror/networkx+networkx/repo --tickets 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from veranda_dagster.domain.clone.object_cache import ObjectCache  # noqa: E402
from veranda_dagster.resources.workspace import WorkspaceResource  # noqa: E402

DEFAULT_ORIGIN = "/work/.mirror/networkx+networkx/repo"
GIT_TIMEOUT_S = 1800.0
"""One checkout of a large repository under load."""


def du(path: Path) -> int:
    """Allocated bytes under ``path``, links not followed."""
    total = 0
    for top, _dirs, files in os.walk(path):
        total += os.lstat(top).st_blocks * 512
        total += sum(os.lstat(os.path.join(top, f)).st_blocks * 512 for f in files)
    return total


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=GIT_TIMEOUT_S,
    )


def plain_clone(store: Path, dest: Path, how: str) -> None:
    """``copy`` or ``borrow_plain`` (see the module docstring)."""
    flag = "--no-hardlinks" if how == "copy" else "--shared"
    _git("clone", "--quiet", "--no-checkout", flag, str(store), str(dest), cwd=dest.parent)
    _git("checkout", "--quiet", "--force", cwd=dest)


def measure(origin: Path, tickets: int, work: Path) -> dict[str, object]:
    """Every way's per-clone bytes and median wall, and the store's bytes."""
    out: dict[str, object] = {"origin": str(origin), "tickets": tickets}
    product_root = work / "product"
    walls: dict[str, list[float]] = {"copy": [], "borrow_plain": [], "product": []}
    sizes: dict[str, list[int]] = {k: [] for k in walls}
    store: Path | None = None
    for i in range(tickets):  # the ways interleaved, ticket by ticket
        started = time.perf_counter()
        clone = WorkspaceResource(root=str(product_root)).clone(f"BENCH-{i}", str(origin))
        clone.ensure()
        walls["product"].append(time.perf_counter() - started)
        sizes["product"].append(du(clone.path))
        if store is None:
            (store,) = ObjectCache(product_root / "_objects").stores()
        for how in ("copy", "borrow_plain"):
            dest = work / how / f"BENCH-{i}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            plain_clone(store, dest, how)
            walls[how].append(time.perf_counter() - started)
            sizes[how].append(du(dest))
    assert store is not None
    out["store_bytes"] = du(store)
    for how in walls:
        out[how] = {
            "clone_bytes": sizes[how],
            "median_wall_s": round(statistics.median(walls[how]), 3),
        }
    copy_bytes = statistics.median(sizes["copy"])
    out["product_over_copy_bytes"] = round(statistics.median(sizes["product"]) / copy_bytes, 4)
    out["load"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--origin", default=DEFAULT_ORIGIN, help="a bare repository")
    parser.add_argument("--tickets", type=int, default=3)
    parser.add_argument("--work-dir", default="", help="scratch folder (default: a temp dir)")
    args = parser.parse_args(argv)
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="clone-disk-"))
    try:
        result = measure(Path(args.origin), args.tickets, work)
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
