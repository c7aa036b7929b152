"""``veranda pack`` starts without the plugins: no Dagster, no HTTP client on its import path.

Loading them cost about a second of CPU of a pack that cost two on a 2,000-file repository
(``docs/retrieval.md``, the time section). Run in a fresh interpreter, since this test process
has imported everything already; the pack itself runs, so a lazy import the command needs
after all would show up here, not in production.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fixtures.context.gitrepo import make_repo

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("dagster", "httpx", "veranda_dagster.plugins", "veranda_dagster.domain.intake.catalog")
PROBE = """
import json, sys
from veranda_dagster.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""
PROBE_TIMEOUT_S = 120


def _run(argv: list[str]) -> tuple[dict[str, Any], str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=PROBE_TIMEOUT_S,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return report, proc.stdout


def test_pack_runs_without_importing_the_plugins(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"lib/http.py": "def parse_retry_after(h):\n    pass\n"})
    ticket = tmp_path / "t.json"
    ticket.write_text(
        json.dumps({"id": "E-1", "source": "linear", "title": "`parse_retry_after` breaks"})
    )
    report, out = _run(["pack", "--repo-dir", str(repo), "--ticket", str(ticket)])
    assert report["code"] == 0
    assert [f["path"] for f in json.loads(out)["files"]] == ["lib/http.py"]
    loaded = set(report["modules"])
    assert not [name for name in HEAVY if name in loaded]


def test_a_command_that_uses_plugins_still_loads_them(tmp_path: Path) -> None:
    """The opt-out is per command: ``detect-repo`` (no ``NEEDS_PLUGINS``) loads them."""
    ticket = tmp_path / "t.json"
    ticket.write_text(json.dumps({"id": "E-1", "source": "linear", "title": "x"}))
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("repos: []\n")
    argv = ["detect-repo", "--catalog", str(catalog), "--ticket", str(ticket), "--no-model"]
    report, _ = _run(argv)
    assert "veranda_dagster.plugins" in report["modules"]
