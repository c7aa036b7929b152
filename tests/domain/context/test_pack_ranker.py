"""The pack's file score decomposed by evidence kind (``pack_ranker.py``): each hit's value is
counted under the kind that gave it, the parts times the path factor give back the hand-set
score exactly, other weights are in force when given, and the title's share counts only for a
file a search found."""

from __future__ import annotations

import pytest

from veranda_dagster.domain.context import pack_ranker, retrieval
from veranda_dagster.domain.context.code_search import Hit
from veranda_dagster.domain.context.pack_signals import FrameAnchor, TicketEvidence
from veranda_dagster.domain.context.pack_windows import FileEvidence
from veranda_dagster.domain.context.retrieval import (
    KEYWORD_WEIGHT,
    SearchResult,
    rank_files,
)


def _results() -> list[SearchResult]:
    """One search of each kind, each hitting its own file (and a shared hub)."""
    return [
        SearchResult(
            "parse_date",
            0,
            [
                Hit("pkg/dates.py", 10, "def parse_date(text):"),
                Hit("pkg/hub.py", 3, "from pkg.dates import parse_date"),
                Hit("pkg/hub.py", 40, "    return parse_date(value)"),
                Hit("tests/test_dates.py", 5, "    assert parse_date('x')"),
            ],
            seed="parse_date",
        ),
        SearchResult("pkg/paths.py", 1, [Hit("pkg/paths.py", 0, "", "path")], seed="pkg/paths.py"),
        SearchResult("timezone", 9, [Hit("pkg/zones.py", 7, "# the timezone")], KEYWORD_WEIGHT),
        SearchResult("bad date", 0, [Hit("pkg/errors.py", 2, "raise E('bad')")], 2.0, strong=True),
    ]  # fmt: skip


def _signals() -> TicketEvidence:
    return TicketEvidence(
        frames=[FrameAnchor("pkg/dates.py", 12, 3.0)],
        links=[FrameAnchor("docs/dates.md", 0, 1.8)],
        full_text={"pkg/dates.py": 1.0, "pkg/hub.py": 0.8, "pkg/only_text.py": 0.5},
        title={"pkg/hub.py": 1.0, "pkg/only_text.py": 0.9},
    )


def test_the_parts_times_the_factor_give_back_the_hand_set_score_exactly() -> None:
    ranked = rank_files(_results(), _signals(), weights=pack_ranker.TODAY_WEIGHTS)
    assert len(ranked) == 8
    for ev in ranked:
        assert ev.score > 0
        assert pack_ranker.weighted_score(ev, pack_ranker.TODAY_WEIGHTS) == pytest.approx(
            ev.score, rel=1e-12
        )
    # and the shipped weights rank exactly as the hand-set sum does
    shipped = rank_files(_results(), _signals())
    assert [(e.path, e.score) for e in shipped] == [(e.path, e.score) for e in ranked]


KINDS = [
    # (file, the kinds its score is made of)
    ("pkg/dates.py", {"definition", "frame", "full_text"}),
    ("pkg/hub.py", {"plain", "full_text"}),  # the plain line outweighs the import line
    ("tests/test_dates.py", {"plain"}),
    ("pkg/paths.py", {"path"}),
    ("pkg/zones.py", {"word"}),
    ("pkg/errors.py", {"message"}),
    ("docs/dates.md", {"link"}),
    ("pkg/only_text.py", {"full_text"}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "kinds"), KINDS, ids=[k[0] for k in KINDS])
def test_each_hit_counts_under_the_kind_that_gave_its_value(path: str, kinds: set[str]) -> None:
    by_path = {ev.path: ev for ev in rank_files(_results(), _signals())}
    parts = {k for k, v in by_path[path].parts.items() if v > 0 and k in pack_ranker.PARTS}
    assert parts == kinds


def test_an_import_line_alone_counts_as_an_import() -> None:
    """The twin of the hub row: without its plain line the hub's seed value is the import's."""
    results = [SearchResult("f", 0, [Hit("pkg/hub.py", 3, "from pkg.a import f")], seed="f")]
    [ev] = rank_files(results)
    assert set(ev.parts) == {"import", "seeds"}
    assert ev.parts["import"] == pytest.approx(retrieval.IMPORT_FACTOR)


def test_the_path_factor_is_kept_apart_from_the_parts() -> None:
    by_path = {ev.path: ev for ev in rank_files(_results(), _signals())}
    assert by_path["tests/test_dates.py"].factor < 1.0 == by_path["pkg/dates.py"].factor
    vector = pack_ranker.features(by_path["tests/test_dates.py"])
    assert vector["plain"] == pytest.approx(by_path["tests/test_dates.py"].score)
    assert vector["undiscounted"] > 0  # what the factor took away


def test_other_weights_are_in_force() -> None:
    """Without a definition's share the definer falls below the hub; the hand-set sum keeps it
    first (the twin)."""
    no_frame = TicketEvidence(full_text={"pkg/dates.py": 1.0, "pkg/hub.py": 0.8})
    today = [e.path for e in rank_files(_results(), no_frame)]
    assert today.index("pkg/dates.py") < today.index("pkg/hub.py")
    weights = dict(pack_ranker.TODAY_WEIGHTS, definition=0.0)
    other = [e.path for e in rank_files(_results(), no_frame, weights=weights)]
    assert other.index("pkg/dates.py") > other.index("pkg/hub.py")


TITLE_ROWS = [
    # (rule, parts, title feature expected)
    ("a file a search hit gets its title share", {"plain": 1.0, "seeds": 1.0, "title": 0.8}, 0.8),
    ("a file only the full text found gets none", {"full_text": 1.2, "title": 0.8}, 0.0),
    ("no title share, nothing", {"plain": 1.0, "seeds": 1.0}, 0.0),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "parts", "title"), TITLE_ROWS, ids=[r[0] for r in TITLE_ROWS])
def test_the_title_orders_only_what_the_searches_found(
    rule: str, parts: dict[str, float], title: float
) -> None:
    ev = FileEvidence("pkg/a.py", parts=parts)
    assert pack_ranker.features(ev)["title"] == pytest.approx(title)


def _definer_and_hub(frame_on_definer: bool) -> list[FileEvidence]:
    """A module defining the named function, and a hub mentioning it on many lines with a
    higher full-text share; the frame is on one of them."""
    frame = {"frame": 3.0}
    definer = FileEvidence(
        "pkg/dates.py", parts={"definition": 2.0, "full_text": 0.9, "seeds": 1.0}
    )
    hub = FileEvidence("pkg/api.py", parts={"plain": 1.0, "full_text": 1.5, "seeds": 3.0})
    (definer if frame_on_definer else hub).parts.update(frame)
    return [definer, hub]


@pytest.mark.parametrize(
    ("frame_on_definer", "first"),
    [(True, "pkg/dates.py"), (False, "pkg/api.py")],
    ids=["a definer with the frame goes over a mention-only hub", "twin: the frame on the hub"],
)
def test_the_shipped_scorer_orders_a_definer_with_a_frame_over_a_hub(
    frame_on_definer: bool, first: str
) -> None:
    files = _definer_and_hub(frame_on_definer)
    best = max(files, key=lambda ev: pack_ranker.weighted_score(ev, pack_ranker.RANKER_WEIGHTS))
    assert best.path == first


def test_build_pack_ranks_the_title_only_when_the_weights_read_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``gather`` is given the title only when a weight reads it: the hand-set ranking spends
    nothing on it; a weight on it (the twin) has it ranked."""
    seen: list[str | None] = []

    def gather(text: str, search: object, most: int, title: str | None = None) -> TicketEvidence:
        seen.append(title)
        return TicketEvidence()

    class NoSearch:
        sha = "0" * 40

        def search(self, query: str) -> list[Hit]:
            return []

    monkeypatch.setattr(retrieval, "gather", gather)
    retrieval.build_pack(["x"], NoSearch(), ticket_text="t\nbody", title="t")  # type: ignore[arg-type]
    monkeypatch.setattr(pack_ranker, "RANKER_WEIGHTS", dict(pack_ranker.TODAY_WEIGHTS, title=1.0))
    retrieval.build_pack(["x"], NoSearch(), ticket_text="t\nbody", title="t")  # type: ignore[arg-type]
    assert seen == [None, "t"]
