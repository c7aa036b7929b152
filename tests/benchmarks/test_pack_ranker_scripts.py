"""The fit of the pack ranker's weights (``benchmarks/fit_pack_ranker.py``) and the in-process
loop that captures its input (``benchmarks/retrieval_inprocess.py``), on tiny inputs: the fit is
deterministic and moves a weight the way the data say (and the other way on the twin data); the
loop reads only the development splits and captures vectors that sum to each file's score."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from tests.benchmarks.scripts import load_script
from tests.benchmarks.test_retrieval_benchmark import REPORT, _make_repo
from veranda_dagster.domain.context.pack_ranker import TODAY_WEIGHTS

fitter = load_script("fit_pack_ranker")
inprocess = load_script("retrieval_inprocess")
builder = load_script("build_retrieval_cases")


def _case(i: int, repo: str, gold_frame: float) -> dict[str, object]:
    """A case whose gold file and two others differ in their frame and full-text parts."""
    return {
        "id": f"c{i}",
        "repo": repo,
        "split": "dev",
        "gold": ["pkg/fix.py"],
        "candidates": [
            {"path": "pkg/hub.py", "score": 2.0, "x": {"full_text": 1.5, "frame": 0.5}},
            {"path": "pkg/fix.py", "score": 1.8, "x": {"full_text": i / 99, "frame": gold_frame}},
            {"path": "pkg/other.py", "score": 1.0, "x": {"full_text": 1.0}},
        ],
    }  # fmt: skip


def _cases(gold_frame: float) -> list[dict[str, object]]:
    return [_case(i, f"org/r{i % 3}", gold_frame) for i in range(6)]


def test_the_fit_is_deterministic() -> None:
    first = fitter.fit(_cases(1.5), l2=1.0)
    assert first == fitter.fit(_cases(1.5), l2=1.0)
    assert set(first) == set(TODAY_WEIGHTS)


@pytest.mark.parametrize(
    ("gold_frame", "frame_up"),
    [(1.5, True), (0.0, False)],
    ids=["the gold file has the frame: its weight rises", "twin: the hub has it: it falls"],
)
def test_the_fit_moves_a_weight_the_way_the_pairs_say(gold_frame: float, frame_up: bool) -> None:
    weights = fitter.fit(_cases(gold_frame), l2=1.0)
    assert (weights["frame"] > TODAY_WEIGHTS["frame"]) is frame_up


def test_leave_one_project_out_fits_each_repository_without_it(tmp_path: Path) -> None:
    """Only org/r0's gold files lack the frame: the weights fit without it trust the frame
    most."""
    cases = [c for c in _cases(1.5) if c["repo"] != "org/r0"]
    cases += [c for c in _cases(0.0) if c["repo"] == "org/r0"]
    by_repo = fitter.lopo(cases, l2=1.0)
    assert set(by_repo) == {"org/r0", "org/r1", "org/r2"}
    assert by_repo["org/r0"]["frame"] > max(by_repo["org/r1"]["frame"], by_repo["org/r2"]["frame"])
    features = tmp_path / "features.json"
    features.write_text(json.dumps(cases))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = fitter.main([str(features), "--weights-out", str(tmp_path / "w.json")])
    assert code == 0 and "dev" in out.getvalue()
    assert json.loads((tmp_path / "w.json").read_text()) == fitter.fit(cases)


def test_the_loop_reads_only_the_development_splits(tmp_path: Path) -> None:
    repos = _make_repo(tmp_path / "repos")
    [case] = builder.build(repos, [REPORT])
    check = dict(case, id="check-1", split="heldout2", repo="acme/absent")  # never read
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([case, check]))
    rows, features = tmp_path / "rows.json", tmp_path / "features.json"
    argv = ["--repos-dir", str(repos), "--cases", str(cases), "--clones", str(tmp_path / "c")]
    with contextlib.redirect_stdout(io.StringIO()):
        assert inprocess.main([*argv, "--rows", str(rows), "--features", str(features)]) == 0
    [row] = json.loads(rows.read_text())
    assert row["id"] == case["id"] and row["r1"] == 1.0
    [captured] = json.loads(features.read_text())
    assert captured["gold"] == ["demo/auth.py"]
    for candidate in captured["candidates"]:
        total = sum(TODAY_WEIGHTS[k] * v for k, v in candidate["x"].items())
        assert total == pytest.approx(candidate["score"])
        assert candidate["promotion"] >= 1.0
    assert any(c["x"]["title"] > 0 for c in captured["candidates"])  # captured at weight 0
