"""Loading the code location (what every run worker does before its first phase) imports what a
run uses and not what only a command line or the simulation does: httpx's own CLI (``click``
aside, which Dagster imports itself) with its ``rich`` and ``pygments``, the ``veranda`` CLI, the
simulation, the ops server's metrics and the browser. Checked in a fresh interpreter, as a run
worker starts."""

from __future__ import annotations

import json
import os
import sys

from tests.support.processes import run_in_repo

NOT_AT_LOAD = (
    "httpx._main",
    "rich",
    "pygments",
    "veranda_dagster.cli",
    "veranda_dagster.sim",
    "prometheus_client",
    "playwright",
)

CHILD = """
import json, sys
import veranda_dagster.definitions
import httpx
print(json.dumps({
    "loaded": sorted(m for m in sys.modules if sys.modules[m] is not None),
    "httpx_main": callable(httpx.main),
}))
"""


def test_the_code_location_loads_without_cli_or_simulation_modules() -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_TOKEN", "_KEY"))}
    proc = run_in_repo([sys.executable, "-c", CHILD], env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.splitlines()[-1])
    loaded = set(seen["loaded"])
    assert "veranda_dagster.definitions" in loaded and "httpx" in loaded  # the probe can fail
    heavy = {m for m in loaded if any(m == n or m.startswith(n + ".") for n in NOT_AT_LOAD)}
    assert heavy == set()
    assert seen["httpx_main"]  # httpx's own stand-in for a missing CLI extra
