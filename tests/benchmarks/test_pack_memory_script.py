"""``benchmarks/pack_memory.py`` runs small here: a tiny tree, streamed past a tiny cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.scripts import git, load_script


def test_pack_memory_measures_held_against_streamed_in_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "flows").mkdir()
    (repo / "flows" / "retry.py").write_text(
        "def propose_state(run, timeout_seconds):\n    return run.retry(timeout_seconds)\n"
    )
    (repo / "flows" / "other.py").write_text("def unrelated():\n    return 0\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    bench = load_script("pack_memory")
    summary = bench.measure(repo, 1, cap=10)
    assert summary["held"]["text_mode"] == "held"
    assert summary["streamed"]["text_mode"] == "streamed"
    assert summary["same_pack"] is True
    for mode in ("floor", "held", "streamed"):
        assert summary[mode]["rss_peak_mib"] > 0 and summary[mode]["cpu_s"] > 0
