"""``benchmarks/clone_disk.py`` runs small here: two tickets of a tiny real history."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.benchmarks.scripts import git, load_script


def test_clone_disk_measures_copy_against_borrow_on_a_tiny_origin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")
    origin, dev = tmp_path / "origin.git", tmp_path / "dev"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(dev)], check=True, capture_output=True)
    for i in range(5):
        (dev / "data.bin").write_bytes(os.urandom(32 * 1024))
        git(dev, "add", "-A")
        git(dev, "commit", "-qm", f"rev {i}")
    git(dev, "push", "-q", "origin", "HEAD:main")
    bench = load_script("clone_disk")
    result = bench.main(["--origin", str(origin), "--tickets", "2"])
    assert result["tickets"] == 2
    copy, product = result["copy"], result["product"]
    assert len(copy["clone_bytes"]) == len(product["clone_bytes"]) == 2
    assert result["product_over_copy_bytes"] < 1.0
