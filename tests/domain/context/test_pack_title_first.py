"""Table tests for the fifth round of issue 35's file ranking: between the files the pack chose,
the one the ticket's title reads like goes first (``retrieval.title_first``), and the title's own
ranking is kept only when the title names something specific (``pack_signals.TITLE_MIN_IDF``).
Each rule has its adversarial twins: the cases where the first file keeps its place."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context import pack_signals
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.pack_signals import TITLE_WEIGHT, gather
from veranda_dagster.domain.context.pack_windows import FileEvidence
from veranda_dagster.domain.context.retrieval import title_first

# --- the title orders the chosen files ---------------------------------------------------------

TITLE_RULES = [
    # (rule, chosen (path, score) in order, title shares, first file)
    ("the file the title reads like goes first when the gap is within the title's weight",
     [("a.py", 2.0), ("b.py", 1.8), ("c.py", 1.0)], {"b.py": 1.0, "a.py": 0.1}, "b.py"),
    ("the title's second file can go first too, by the same sum",
     [("a.py", 2.0), ("b.py", 1.9), ("c.py", 1.8)], {"c.py": 0.9, "b.py": 0.2}, "c.py"),
    ("a gap larger than the title's weight keeps the first file",
     [("a.py", 2.0), ("b.py", 2.0 - TITLE_WEIGHT - 0.05)], {"b.py": 1.0}, "a.py"),
    ("the title reading like the first file keeps it",
     [("a.py", 2.0), ("b.py", 1.9)], {"a.py": 1.0, "b.py": 0.9}, "a.py"),
    ("no title ranking keeps the order", [("a.py", 2.0), ("b.py", 1.9)], {}, "a.py"),
    ("a file a rule moved first (not first by score) keeps its place",
     [("c.py", 1.0), ("a.py", 2.0), ("b.py", 1.9)], {"b.py": 1.0}, "c.py"),
    ("a file outside the chosen ones is never brought in",
     [("a.py", 2.0), ("b.py", 1.9)], {"z.py": 1.0}, "a.py"),
    ("one file: nothing to order", [("a.py", 2.0)], {"a.py": 1.0}, "a.py"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "chosen", "title", "first"), TITLE_RULES, ids=[r[0] for r in TITLE_RULES]
)
def test_the_title_orders_the_chosen_files(rule, chosen, title, first):
    files = [FileEvidence(path, score) for path, score in chosen]
    scores = {path: score for path, score in chosen}
    ordered = [ev.path for ev in title_first(files, scores, title)]
    assert ordered[0] == first
    assert sorted(ordered) == sorted(path for path, _ in chosen)  # moved, never added or dropped
    if first == chosen[0][0]:
        assert ordered == [path for path, _ in chosen]  # left alone means the same order


def test_the_title_judges_the_scores_before_the_rules_reordered_them():
    """The twin: the chosen order has the same files, but the scores the ranking gave (before a
    promotion multiplied one) decide; a promoted score does not let the title move a file."""
    files = [FileEvidence("a.py", 2.0), FileEvidence("b.py", 5.0)]  # b promoted after ranking
    assert [ev.path for ev in title_first(files, {"a.py": 2.0, "b.py": 1.0}, {"b.py": 1.0})] == [
        "a.py",
        "b.py",
    ]
    assert [ev.path for ev in title_first(files, {"a.py": 2.0, "b.py": 1.9}, {"b.py": 1.0})] == [
        "b.py",
        "a.py",
    ]


# --- the title's own ranking, kept only when it names something specific ------------------------

COMMON = "def run(value):\n    # the python test of a value\n    return value\n"


def _tree() -> dict[str, str]:
    """Twenty modules that all say ``python`` and ``test``; one also says ``quadratic``."""
    files = {f"pkg/mod{i:02d}.py": COMMON for i in range(20)}
    files["pkg/decoder.py"] = COMMON + "\n\ndef split_quadratic(lines):\n    return lines\n"
    return files


GATE_RULES = [
    # (rule, title, title ranking kept)
    ("a title with a term few files have is ranked", "split_quadratic is quadratic", True),
    ("a title of words most files have is not", "python test failures", False),
    ("an empty title is not", "   ", False),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "title", "kept"), GATE_RULES, ids=[r[0] for r in GATE_RULES])
def test_the_title_ranking_needs_a_specific_term(tmp_path, rule, title, kept):
    search = LocalGitGrep(make_repo(tmp_path / "repo", _tree()))
    text = f"{title}\nThe decoder hangs on long input when a value is split."
    evidence = gather(text, search, max_searches=12, title=title)
    assert bool(evidence.title) is kept
    if kept:
        assert max(evidence.title, key=lambda p: evidence.title[p]) == "pkg/decoder.py"
    assert evidence.searches == 1  # the title's ranking is no search of its own
    assert evidence.full_text  # the ticket's own ranking is there either way


def test_the_gate_is_what_drops_a_common_title(tmp_path, monkeypatch):
    """The twin of the gate: with ``TITLE_MIN_IDF`` at zero the common title is ranked, so the
    table's ``False`` rows hold because of the gate, not because the ranking came back empty."""
    monkeypatch.setattr(pack_signals, "TITLE_MIN_IDF", 0.0)
    search = LocalGitGrep(make_repo(tmp_path / "repo", _tree()))
    title = "python test failures"
    evidence = gather(f"{title}\nbody", search, max_searches=12, title=title)
    assert evidence.title


def test_no_title_ranking_without_the_full_text_search(tmp_path):
    """No search left for the full text: the title is not ranked either (it reads its index)."""
    search = LocalGitGrep(make_repo(tmp_path / "repo", _tree()))
    title = "split_quadratic is quadratic"
    evidence = gather(f"{title}\nbody", search, max_searches=0, title=title)
    assert evidence.title == {} and evidence.searches == 0
