"""Smoke test of the retrieval benchmark harness on a tiny repository built here.

It needs neither the fetched repositories nor the network: a three-commit git repository with a
bug, its fix and a test stands in for a project's history, the dataset builder derives the case
from it, and the harness runs the real ``veranda pack`` CLI and both baselines on it.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from tests.benchmarks.scripts import git, load_script

bench = load_script("retrieval")
builder = load_script("build_retrieval_cases")


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
    git(repo, "init", "-q", "-b", "main")
    (repo / "demo").mkdir()
    (repo / "tests").mkdir()
    (repo / "demo" / "auth.py").write_text(AUTH_BASE)
    (repo / "demo" / "client.py").write_text("from demo.auth import NetRCAuth\n\n" + NOISE)
    (repo / "demo" / "models.py").write_text(NOISE)
    (repo / "README.md").write_text("Use `NetRCAuth(file=...)` for netrc.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "demo" / "auth.py").write_text(AUTH_BASE.replace("file)", "file=None)"))
    (repo / "demo" / "new_helper.py").write_text("X = 1\n")
    (repo / "tests" / "test_auth.py").write_text("def test_default():\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Fix #7: default file=None for NetRCAuth")
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
        code = bench.main([*argv, "--pack-cmd", " ".join(pack_cmd)])
    return code, capture.getvalue(), json.loads(out_json.read_text())


def test_builder_derives_base_gold_and_edited_lines_from_history(repos_dir: Path) -> None:
    [case] = builder.build(repos_dir, [REPORT])
    repo = repos_dir / "acme+demo"
    assert case["base_sha"] == git(repo, "rev-parse", "HEAD^")
    assert case["fix_sha"] == git(repo, "rev-parse", "HEAD")
    # the test file and the file the fix created are not gold; the changed source file is
    assert case["gold_files"] == ["demo/auth.py"]
    assert case["id"] == "demo-7" and case["issue_url"].endswith("acme/demo/issues/7")
    # the fix rewrites line 7 of the base (``def __init__(self, file):``)
    assert case["edit_lines"] == {"demo/auth.py": [[7, 7]]}


def test_a_held_out_report_keeps_its_split_and_an_unknown_split_is_refused(
    repos_dir: Path,
) -> None:
    [case] = builder.build(repos_dir, [REPORT])
    assert case["split"] == "dev"
    [held] = builder.build(repos_dir, [dict(REPORT, split="heldout")])
    assert held["split"] == "heldout"
    with pytest.raises(builder.DatasetError, match="unknown split"):
        builder.build(repos_dir, [dict(REPORT, split="train")])


def _row(case_id: str, repo: str, split: str, r6: float, gold: int = 1) -> dict:
    cell: dict[str, object] = {"r1": r6, "r6": r6, "edit_hit": None, "files": [], "bytes": 0}
    row: dict[str, object] = {"id": case_id, "repo": repo, "split": split, "report_source": "issue"}
    row.update(gold=[f"f{i}.py" for i in range(gold)], seconds=1.0, cpu_seconds=1.0)
    return row | {"peak_rss_mb": 1.0} | {name: dict(cell) for name in bench.RANKERS}


def test_a_held_out_split_is_totalled_apart_and_never_pooled() -> None:
    rows = [
        _row("a-1", "o/a", "dev", 1.0),
        _row("a-2", "o/a", "dev", 0.0, gold=2),
        _row("b-1", "o/b", "heldout", 0.5, gold=2),
    ]
    groups = bench.group_totals(rows)
    assert "all" not in groups  # two splits: no pooled row to quote by mistake
    assert groups["split:dev"]["cases"] == 2 and groups["split:heldout"]["cases"] == 1
    assert groups["split:dev"]["ours"]["recall_at_6"] == 0.5
    assert groups["split:heldout gold files > 1"]["cases"] == 1
    assert groups["split:dev gold files > 1"]["cases"] == 1
    assert set(bench.group_totals(rows[:2])) >= {"all", "o/a", "gold files > 1"}


def test_edited_ranges_count_base_lines_and_anchor_pure_insertions() -> None:
    diff = "@@ -3,2 +3,4 @@ x\n@@ -10 +12 @@\n@@ -20,0 +23,5 @@\n@@ -0,0 +1 @@\n"
    assert builder.edited_ranges(diff) == [[3, 4], [10, 10], [20, 20], [1, 1]]


def test_reports_come_from_the_main_file_and_every_per_project_file(tmp_path: Path) -> None:
    main_file = tmp_path / "reports.json"
    main_file.write_text(json.dumps([REPORT]))
    folder = tmp_path / "reports"
    folder.mkdir()
    other = dict(REPORT, repo="acme/other", issue=3)
    (folder / "acme+other.json").write_text(json.dumps([other, REPORT]))
    loaded = builder.load_reports(main_file, folder)
    assert [(r["repo"], r["issue"]) for r in loaded] == [("acme/demo", 7), ("acme/other", 3)]
    (folder / "broken.json").write_text("{")
    with pytest.raises(builder.DatasetError, match=r"broken\.json"):
        builder.load_reports(main_file, folder)


def test_builder_fails_clearly_on_missing_repo(tmp_path: Path) -> None:
    with pytest.raises(builder.DatasetError, match="acme/demo not found"):
        builder.build(tmp_path, [REPORT])


def test_all_rankers_side_by_side_with_recall_edit_hit_time_and_memory(
    one_run, repos_dir: Path
) -> None:
    code, table, result = one_run
    assert code == 0
    assert "acme/demo" in table and "demo-7" in table
    [row] = result["rows"]
    assert row["seeds"], "the pack printed no seeds"
    for name in ("ours", "bm25_budget", "naive"):
        assert row[name]["bytes"] <= 12_000 and len(row[name]["files"]) <= 6
    assert row["ours"]["r6"] == 1.0 and row["ours"]["r1"] == 1.0  # NetRCAuth is defined once
    assert row["ours"]["edit_hit"] is True  # its window holds the edited line 7
    assert row["bm25_full"]["files"][0] == "demo/auth.py"
    assert row["bm25_full"]["edit_hit"] is None  # whole files: an edit hit says nothing
    assert row["seconds"] > 0 and row["peak_rss_mb"] > 1
    totals = result["totals"]["all"]
    assert totals["cases"] == 1 and set(result["totals"]) >= {"all", "acme/demo"}
    assert set(totals) >= {*bench.RANKERS, "ours_minus_bm25_full"}
    assert totals["ours"]["median_s"] > 0 and totals["ours"]["peak_rss_mb"] > 1
    # the worktree is gone afterwards: the clone is left as it was found
    listing = git(repos_dir / "acme+demo", "worktree", "list")
    assert len(listing.splitlines()) == 1


def test_totals_only_names_no_case_on_screen_or_in_the_json(
    one_run, repos_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held-out set measured with ``--totals-only`` is never read case by case, nor by
    project: only its split's totals are shown."""
    _, _, result = one_run
    [row] = result["rows"]
    monkeypatch.setattr(bench, "run_case", lambda case, repo_dir, command: row)
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps(builder.build(repos_dir, [REPORT])))
    out_json = tmp_path / "out.json"
    argv = ["--repos-dir", str(repos_dir), "--cases", str(cases_file), "--json", str(out_json)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert bench.main([*argv, "--totals-only", "--pack-cmd", sys.executable]) == 0
    assert row["id"] == "demo-7" and "demo-7" not in out.getvalue() + err.getvalue()
    assert "acme/demo" not in out.getvalue() and "[1/1]" in err.getvalue()
    written = json.loads(out_json.read_text())
    assert "rows" not in written and "demo-7" not in out_json.read_text()
    assert "acme/demo" in result["totals"] and "acme/demo" not in written["totals"]
    assert written["totals"]["all"] == result["totals"]["all"]


def test_a_check_split_is_never_read_case_by_case_and_a_development_split_is(
    one_run, repos_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``--totals-only`` the development splits (``dev2`` among them) are named case by
    case; a check split's case is counted in its split's totals and never named, nor its
    project totalled from it."""
    _, _, result = one_run
    [row] = result["rows"]
    monkeypatch.setattr(
        bench,
        "run_case",
        lambda case, repo_dir, command: row | {k: case[k] for k in ("id", "split")},
    )
    reports = [REPORT | {"issue": 71, "split": "dev2"}, REPORT | {"issue": 72, "split": "heldout"}]
    reports.append(REPORT | {"issue": 73, "split": "heldout2"})
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps(builder.build(repos_dir, reports)))
    out_json = tmp_path / "out.json"
    argv = ["--repos-dir", str(repos_dir), "--cases", str(cases_file), "--json", str(out_json)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert bench.main([*argv, "--pack-cmd", sys.executable]) == 0
    seen = out.getvalue() + err.getvalue() + out_json.read_text()
    assert "demo-71" in seen and "demo-72" in seen  # development splits: read one by one
    assert "demo-73" not in seen  # the check split: never
    written = json.loads(out_json.read_text())
    assert [r["split"] for r in written["rows"]] == ["dev2", "heldout"]
    assert written["totals"]["split:heldout2"]["cases"] == 1
    assert written["totals"]["acme/demo"]["cases"] == 2  # its project counts the readable two
    assert set(bench.DEVELOPMENT_SPLITS) == {"dev", "heldout", "dev2"}


def test_edit_hit_needs_a_window_overlapping_an_edited_line() -> None:
    packed = bench.Packed(files=["a.py"], spans={"a.py": [(1, 12), (30, 41)]})
    assert bench.edit_hit(packed, {"a.py": [[42, 50]]}) is False
    assert bench.edit_hit(packed, {"a.py": [[41, 41]]}) is True
    assert bench.edit_hit(packed, {"b.py": [[1, 1]]}) is False


def test_recall_at_k_is_normalised_by_what_k_files_can_hold() -> None:
    assert bench.recall_at(["a", "b"], ["b", "c"], 1) == 0.0
    assert bench.recall_at(["b", "a"], ["b", "c"], 1) == 1.0
    assert bench.recall_at(["b", "a", "c"], ["b", "c"], 6) == 1.0


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
    seven = {f"f{i}.py": [bench.Span(1, 1, "x" * 1000)] for i in range(7)}
    assert bench.pack_ranked(sorted(seven), seven).files == [f"f{i}.py" for i in range(6)]
    texts = {
        name: [bench.Span(1, 1, char * size)]
        for name, char, size in (("a.py", "a", 11_999), ("b.py", "b", 2), ("c.py", "c", 1))
    }
    packed = bench.pack_ranked(["a.py", "b.py", "c.py"], texts)
    assert packed.files == ["a.py", "c.py"] and packed.bytes == 12_000  # b would make 12,001


def test_windows_are_twelve_lines_merged_and_capped() -> None:
    lines = [f"line {i}\n" for i in range(1, 201)]
    [one] = bench.windows_for(lines, [50, 52])
    assert one.text.count("\n") == 12 and "line 50\n" in one.text and "line 52\n" in one.text
    assert (one.start, one.end) == (45, 56)
    assert len(bench.windows_for(lines, [10, 40, 70, 100, 130, 160])) == 4
    assert bench.windows_for(lines, [])[0].text.startswith("line 1\n")  # the file head


def test_naive_ranks_by_distinct_seeds_then_lines() -> None:
    hits = {"s1": {"a.py": [1, 2, 3], "b.py": [1]}, "s2": {"b.py": [5]}, "s3": {"c.py": [1]}}
    assert bench.rank_naive(hits) == ["b.py", "a.py", "c.py"]


def test_words_split_identifiers() -> None:
    assert bench.words("NetRCAuth.__init__") == ["netrcauth", "net", "rc", "auth", "init"]


def test_grep_floor_times_the_pack_beside_both_git_grep_floors(
    repos_dir: Path, pack_cmd: list[str], tmp_path: Path
) -> None:
    """``benchmarks/grep_floor.py`` run small through its entry point: one case, one JSON row
    with the pack's CPU and memory beside both floors; an unknown case id is a clear error."""
    floor = load_script("grep_floor")
    cases_file = tmp_path / "cases.json"
    [case] = builder.build(repos_dir, [REPORT])
    cases_file.write_text(json.dumps([case]))
    argv = ["--repos-dir", str(repos_dir), "--cases", str(cases_file), "--case", case["id"]]
    capture = io.StringIO()
    with contextlib.redirect_stdout(capture):
        code = floor.main([*argv, "--pack-cmd", " ".join(pack_cmd)])
    assert code == 0
    row = json.loads(capture.getvalue().strip().splitlines()[-1])
    assert row["id"] == case["id"] and row["seeds"] >= 1
    assert row["pack_cpu_s"] > 0 and row["pack_peak_mb"] > 0
    assert row["grep_objects_cpu_s"] >= 0 and row["grep_worktree_cpu_s"] >= 0
    missing = ["--repos-dir", str(repos_dir), "--cases", str(cases_file), "--case", "nope"]
    assert floor.main([*missing, "--pack-cmd", " ".join(pack_cmd)]) == 2
