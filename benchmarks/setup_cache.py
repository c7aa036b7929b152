"""The setup step: what a cold environment costs, and what the next ticket pays.

The sample repository's own setup (``acme/billing``: a venv with pytest and ruff) runs in the
sandbox through the registry proxy, from a loopback simple index serving the real wheels of
pytest, ruff and their dependencies (downloaded from PyPI once into ``--wheels``). Each round
uses a fresh cache: one cold ``prepare_environment`` (the first ticket), then ``--tickets``
more tickets' clones of the same commit (each a cache hit). The table reports the medians, the
ratio, and the registry requests each kind of ticket made, all from one run.

    python benchmarks/setup_cache.py --wheels /tmp/setup-wheels [--rounds 3] [--json out.json]
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
sys.path.insert(0, str(ROOT))

from veranda_dagster.domain.context.facts import read_repo_facts  # noqa: E402
from veranda_dagster.environment.setup import prepare_environment  # noqa: E402
from veranda_dagster.sim.package_index import PackageIndex  # noqa: E402
from veranda_dagster.sim.sample_org import BILLING, billing_files  # noqa: E402

TOOLS = ("pytest", "ruff")
INSTALL = (
    "set -e\n"
    'python3 -m venv --without-pip "$VERANDA_ENV/venv"\n'
    'python3 -m pip --python "$VERANDA_ENV/venv/bin/python" install pytest ruff\n'
)
"""The billing sample's install lines, without its shortcut for a machine that already has
the tools (this one does: the product's dev extras)."""


def _wheels(folder: Path) -> None:
    if any(folder.glob("ruff-*.whl")):
        return
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
         "--dest", str(folder), *TOOLS],
        check=True, timeout=600,
    )  # fmt: skip


def _clone(root: Path, name: str) -> Path:
    repo = root / name
    for rel, text in {**billing_files(), ".veranda/setup.sh": INSTALL}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    return repo


def _round(index: PackageIndex, tickets: int) -> dict[str, object]:
    scratch = Path(tempfile.mkdtemp(prefix="veranda-setup-bench-"))
    try:
        os.environ["VERANDA_ENV_CACHE"] = str(scratch / "cache")
        times, requests, statuses = [], [], []
        for ticket in range(1 + tickets):
            repo = _clone(scratch, f"ticket-{ticket}")
            before = len(index.requests)
            started = time.perf_counter()
            outcome = prepare_environment(BILLING, repo, read_repo_facts(repo))
            times.append(time.perf_counter() - started)
            requests.append(len(index.requests) - before)
            statuses.append(outcome.status)
        return {"seconds": times, "requests": requests, "status": statuses,
                "size_bytes": outcome.size_bytes}  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wheels", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tickets", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("VERANDA_SANDBOX", "bwrap")
    _wheels(args.wheels)
    with PackageIndex(args.wheels) as index:
        url = index.base_url + "/simple"
        os.environ["VERANDA_REGISTRIES"] = json.dumps({"pypi": {"url": url, "kind": "pypi"}})
        rounds = [_round(index, args.tickets) for _ in range(args.rounds)]
    cold = [r["seconds"][0] for r in rounds]  # type: ignore[index]
    warm = [s for r in rounds for s in r["seconds"][1:]]  # type: ignore[index]
    result = {
        "cold_median_s": round(statistics.median(cold), 3),
        "cached_median_s": round(statistics.median(warm), 4),
        "ratio_cold_to_cached": round(statistics.median(cold) / statistics.median(warm), 1),
        "cold_registry_requests": [r["requests"][0] for r in rounds],  # type: ignore[index]
        "cached_registry_requests": sorted({n for r in rounds for n in r["requests"][1:]}),  # type: ignore[index]
        "environment_bytes": rounds[0]["size_bytes"],
        "rounds": rounds,
    }
    print(f"cold setup     median {result['cold_median_s']:.2f} s over {len(cold)} rounds, "
          f"{result['cold_registry_requests']} registry requests")  # fmt: skip
    print(f"cached ticket  median {result['cached_median_s']:.4f} s over {len(warm)} tickets, "
          f"{result['cached_registry_requests']} registry requests")  # fmt: skip
    print(f"ratio          {result['ratio_cold_to_cached']}x; environment "
          f"{result['environment_bytes'] / 1e6:.1f} MB")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
