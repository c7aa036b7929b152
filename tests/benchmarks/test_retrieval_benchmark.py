"""Smoke test of the retrieval benchmark harness on a tiny repository built here.

It needs neither the fetched repositories nor the network: a three-commit git repository with a
bug, its fix and a test stands in for a project's history, the dataset builder derives the case
from it, and the harness runs the real ``veranda pack`` CLI and both baselines on it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    """Load ``benchmarks/<name>.py`` (a script directory, not a package) under a private name."""
    spec = importlib.util.spec_from_file_location(
        f"_bench_{name}", ROOT / "benchmarks" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load("retrieval")
builder = _load("build_retrieval_cases")


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid", "HOME": "/"}
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


AUTH_BASE = '''"""Authentication helpers."""


class NetRCAuth:
    """Use a netrc file for credentials."""

    def __init__(self, file):
        self._file = file
'''

NOISE = "\n".join(f"def helper_{i}(value):\n    return value + {i}\n" for i in range(40))


def _make_repo(root: Path) -> Path:
    """``root/acme+demo``: base commit, then a fix touching ``demo/auth.py`` and a test."""
    repo = root / "acme+demo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "demo").mkdir()
    (repo / "tests").mkdir()
    (repo / "demo" / "auth.py").write_text(AUTH_BASE)
    (repo / "demo" / "client.py").write_text("from demo.auth import NetRCAuth\n\n" + NOISE)
    (repo / "demo" / "models.py").write_text(NOISE)
    (repo / "README.md").write_text("Use `NetRCAuth(file=...)` for netrc.\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "demo" / "auth.py").write_text(AUTH_BASE.replace("file)", "file=None)"))
    (repo / "demo" / "new_helper.py").write_text("X = 1\n")
    (repo / "tests" / "test_auth.py").write_text("def test_default():\n    pass\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Fix #7: default file=None for NetRCAuth")
    return root


REPORT = {
    "repo": "acme/demo",
    "issue": 7,
    "fix": "HEAD",
    "title": "NetRCAuth() requires a file argument",
    "body": "Calling `NetRCAuth()` raises TypeError: `NetRCAuth.__init__` missing 'file'.",
}


@pytest.fixture(scope="module")
def repos_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _make_repo(tmp_path_factory.mktemp("repos"))


@pytest.fixture(scope="module")
def pack_cmd(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The real ``veranda`` entry point, run by this interpreter."""
    script = tmp_path_factory.mktemp("bin") / "veranda_entry.py"
    script.write_text("from veranda_dagster.cli import main\nraise SystemExit(main())\n")
    return [sys.executable, str(script)]


@pytest.fixture(scope="module")
def one_run(repos_dir: Path, pack_cmd: list[str], tmp_path_factory: pytest.TempPathFactory):
    """One real run through ``main`` (the pack CLI costs seconds to start, so it runs once)."""
    tmp = tmp_path_factory.mktemp("run")
    cases_file = tmp / "cases.json"
    cases_file.write_text(json.dumps(builder.build(repos_dir, [REPORT])))
    out_json = tmp / "out.json"
    argv = ["--repos-dir", str(repos_dir), "--cases", str(cases_file), "--json", str(out_json)]
    capture = io.StringIO()
    with contextlib.redirect_stdout(capture):
        code = bench.main([*argv, "--with-text-bm25", "--pack-cmd", " ".join(pack_cmd)])
    return code, capture.getvalue(), json.loads(out_json.read_text())


def test_builder_derives_base_and_gold_from_history(repos_dir: Path) -> None:
    [case] = builder.build(repos_dir, [REPORT])
    repo = repos_dir / "acme+demo"
    assert case["base_sha"] == _git(repo, "rev-parse", "HEAD^")
    assert case["fix_sha"] == _git(repo, "rev-parse", "HEAD")
    # the test file and the file the fix created are not gold; the changed source file is
    assert case["gold_files"] == ["demo/auth.py"]
    assert case["id"] == "demo-7" and case["issue_url"].endswith("acme/demo/issues/7")


def test_builder_fails_clearly_on_missing_repo(tmp_path: Path) -> None:
    with pytest.raises(builder.DatasetError, match="acme/demo not found"):
        builder.build(tmp_path, [REPORT])


def test_three_rankers_side_by_side_with_the_same_seeds(one_run, repos_dir: Path) -> None:
    code, table, result = one_run
    assert code == 0
    assert "TOTAL all" in table and "demo-7" in table
    [row] = result["rows"]
    assert row["seeds"], "the pack printed no seeds"
    for name in (*bench.RANKERS, bench.TEXT_BM25):
        assert row[name]["bytes"] <= 12_000 and len(row[name]["files"]) <= 6
    assert row["ours"]["recall"] == 1.0  # NetRCAuth is defined in exactly one file
    assert row["naive"]["files"] and row["bm25"]["files"] and row["bm25_text"]["files"]
    # the opt-in full-text column never counts as a win among the three headline rankers
    assert result["totals"]["all"]["bm25_text"]["wins"] == 0
    totals = result["totals"]["all"]
    assert totals["cases"] == 1
    assert set(totals) >= {"ours", "naive", "bm25", "ours_over_naive", "ours_over_bm25"}
    # the worktree is gone afterwards: the clone is left as it was found
    listing = _git(repos_dir / "acme+demo", "worktree", "list")
    assert len(listing.splitlines()) == 1


def test_missing_commit_or_repo_is_named(repos_dir: Path, pack_cmd: list[str]) -> None:
    [case] = builder.build(repos_dir, [REPORT])
    bad = dict(case, id="demo-gone", base_sha="0" * 40)
    other = dict(case, id="elsewhere-1", repo="acme/absent")
    with pytest.raises(bench.BenchmarkError) as err:
        bench.run([bad, other], repos_dir, pack_cmd)
    assert "demo-gone" in str(err.value) and "acme/absent" in str(err.value)


def test_missing_pack_cli_is_a_clear_error(repos_dir: Path) -> None:
    cases = builder.build(repos_dir, [REPORT])
    with pytest.raises(bench.BenchmarkError, match="not installed"):
        bench.run(cases, repos_dir, ["/nonexistent/veranda"])


def test_budget_caps_files_at_six_and_bytes_at_twelve_thousand() -> None:
    seven = {f"f{i}.py": ["x" * 1000] for i in range(7)}
    assert bench.pack_ranked(sorted(seven), seven).files == [f"f{i}.py" for i in range(6)]
    texts = {"a.py": ["a" * 11_999], "b.py": ["b" * 2], "c.py": ["c"]}
    packed = bench.pack_ranked(["a.py", "b.py", "c.py"], texts)
    assert packed.files == ["a.py", "c.py"] and packed.bytes == 12_000  # b would make 12,001


def test_windows_are_twelve_lines_merged_and_capped() -> None:
    lines = [f"line {i}\n" for i in range(1, 201)]
    [one] = bench.windows_for(lines, [50, 52])
    assert one.count("\n") == 12 and "line 50\n" in one and "line 52\n" in one
    assert len(bench.windows_for(lines, [10, 40, 70, 100, 130, 160])) == 4
    assert bench.windows_for(lines, [])[0].startswith("line 1\n")  # the file head


def test_naive_ranks_by_distinct_seeds_then_lines() -> None:
    hits = {"s1": {"a.py": [1, 2, 3], "b.py": [1]}, "s2": {"b.py": [5]}, "s3": {"c.py": [1]}}
    assert bench.rank_naive(hits) == ["b.py", "a.py", "c.py"]


def test_words_split_identifiers() -> None:
    assert bench.words("NetRCAuth.__init__") == ["netrcauth", "net", "rc", "auth", "init"]
