import random

import pytest

from veranda_dagster.domain.context.code_search import Hit, split_lines, window_bounds
from veranda_dagster.domain.context.pack_windows import truncate_window
from veranda_dagster.domain.context.path_kinds import (
    DATA_FACTOR,
    DOCS_FACTOR,
    TEST_FACTOR,
    VENDORED_FACTOR,
    path_factor,
)
from veranda_dagster.domain.context.retrieval import build_pack, run_searches
from veranda_dagster.domain.core.bounds import (
    MAX_PACK_BYTES,
    MAX_PACK_FILES,
    MAX_SEARCHES,
    MAX_SEEDS,
)
from veranda_dagster.domain.core.models import Window

SHA = "a" * 40


class FakeSearch:
    """An in-memory code index: files as text; a seed hits every line containing it."""

    sha = SHA

    def __init__(self, files: dict[str, str]) -> None:
        self.files = {p: split_lines(t) for p, t in files.items()}
        self.calls: list[str] = []

    def search(self, seed: str) -> list[Hit]:
        self.calls.append(seed)
        return [
            Hit(path, n, line.rstrip("\n"))
            for path, lines in sorted(self.files.items())
            for n, line in enumerate(lines, start=1)
            if seed in line
        ]

    def read_window(self, path: str, line: int) -> Window:
        lines = self.files[path]
        start, end = window_bounds(line, len(lines))
        return Window(start=start, end=end, text="".join(lines[start - 1 : end]))


def _seeds(n: int) -> list[str]:
    return [f"seed_number_{i:02d}" for i in range(n)]


def test_thirteen_searches_are_capped_at_exactly_twelve():
    search = FakeSearch({"a.py": "seed_number_00\n"})
    pack = build_pack(_seeds(13), search)
    assert pack.searches == MAX_SEARCHES == 12
    assert search.calls == _seeds(12)


def test_twelve_searches_all_run_and_a_higher_limit_cannot_lift_the_bound():
    search = FakeSearch({"a.py": "x\n"})
    assert build_pack(_seeds(12), search).searches == 12
    search = FakeSearch({"a.py": "x\n"})
    assert build_pack(_seeds(20), search, max_searches=100).searches == 12


def test_empty_seeds_search_nothing():
    pack = build_pack([], FakeSearch({"a.py": "x\n"}))
    assert (pack.searches, pack.files, pack.citations, pack.bytes) == (0, [], [], 0)


def test_seeds_without_hits_spend_leftover_searches_on_relaxed_variants():
    search = FakeSearch({"pkg/retry.py": "def get_user():\n    pass\n"})
    pack = build_pack(["lib/retry.py", "client.session.get_user"], search)
    assert search.calls == ["lib/retry.py", "client.session.get_user", "retry.py", "get_user"]
    assert pack.searches == 4
    assert [f.path for f in pack.files] == ["pkg/retry.py"]


def test_seven_files_are_capped_at_exactly_six_dropping_the_weakest():
    files = {f"src/mod_{i}.py": "uses shared_helper\n" for i in range(6)}
    files["tests/test_mod.py"] = "uses shared_helper\n"
    pack = build_pack(["shared_helper"], FakeSearch(files))
    assert len(pack.files) == MAX_PACK_FILES == 6
    assert "tests/test_mod.py" not in [f.path for f in pack.files]


def test_six_files_are_all_kept():
    files = {f"src/mod_{i}.py": "uses shared_helper\n" for i in range(6)}
    assert len(build_pack(["shared_helper"], FakeSearch(files)).files) == 6


def _window_file(window_sizes: list[int]) -> str:
    """A 40-line file whose hits at lines 6 and 30 give 12-line windows (1-12, 25-36) of exactly
    the given UTF-8 sizes."""
    lines = [f"filler {i}\n" for i in range(1, 41)]
    for (first, hit), size in zip(((1, 6), (25, 30)), window_sizes, strict=True):
        body = [f"{'hit_seed' if n == hit else 'pad'}" for n in range(first, first + 12)]
        base = sum(len(b) + 1 for b in body)
        body[-1] += "x" * (size - base)
        for offset, text in enumerate(body):
            lines[first - 1 + offset] = text + "\n"
    return "".join(lines)


def test_exactly_twelve_thousand_bytes_fit_whole():
    files = {f"src/f{i}.py": _window_file([1000, 1000]) for i in range(6)}
    pack = build_pack(["hit_seed"], FakeSearch(files))
    assert pack.bytes == MAX_PACK_BYTES == 12_000
    assert all([(w.start, w.end) for w in f.windows] == [(1, 12), (25, 36)] for f in pack.files)


def test_twelve_thousand_and_one_bytes_are_cut_to_exactly_twelve_thousand():
    files = {f"src/f{i}.py": _window_file([1000, 1000]) for i in range(5)}
    files["src/f5.py"] = _window_file([1000, 1001])
    pack = build_pack(["hit_seed"], FakeSearch(files))
    assert pack.bytes == 12_000
    assert sum(len(w.text.encode()) for f in pack.files for w in f.windows) == 12_000
    last = next(f for f in pack.files if f.path == "src/f5.py").windows[-1]
    assert (last.start, last.end) == (25, 36)
    assert len(last.text.encode()) == 1000


def test_the_byte_ceiling_holds_for_random_packs_and_counts_utf8():
    rng = random.Random(7)
    for _ in range(40):
        files = {}
        for i in range(rng.randint(1, 9)):
            lines = [
                ("needle " if rng.random() < 0.2 else "") + "é漢" * rng.randint(0, 400)
                for _ in range(rng.randint(1, 120))
            ]
            files[f"src/m{i}.py"] = "\n".join(lines) + "\n"
        pack = build_pack(["needle"], FakeSearch(files))
        measured = sum(len(w.text.encode("utf-8")) for f in pack.files for w in f.windows)
        assert pack.bytes == measured <= MAX_PACK_BYTES
        assert len(pack.files) <= MAX_PACK_FILES


def test_truncation_keeps_whole_lines_then_a_character_safe_prefix():
    window = Window(start=10, end=12, text="ab\nçd\nef\n")
    cut = truncate_window(window, 5)
    assert cut is not None
    assert (cut.start, cut.end, cut.text) == (10, 11, "ab\nç")
    assert truncate_window(window, 0) is None


def test_one_huge_file_cannot_starve_the_others():
    files = {"src/huge.py": "needle " + "x" * 50_000 + "\n"}
    files |= {f"src/small_{i}.py": "needle\n" for i in range(5)}
    pack = build_pack(["needle"], FakeSearch(files))
    assert len(pack.files) == 6
    assert pack.bytes <= MAX_PACK_BYTES


def test_definitions_rare_seeds_and_source_outrank_mentions_common_seeds_and_tests():
    files = {
        "app/uses.py": "from app.core import compute_total\nprint(compute_total())\n",
        "app/core.py": "def compute_total():\n    return 1\n",
        "tests/test_core.py": "def test_compute_total():\n    assert compute_total()\n",
        "app/both.py": "compute_total\nrare_flag_name\n",
    }
    for i in range(5):
        files[f"app/noise_{i}.py"] = "common_word\n"
    pack = build_pack(["compute_total", "rare_flag_name", "common_word"], FakeSearch(files))
    order = [f.path for f in pack.files]
    assert order[0] == "app/both.py"
    assert order.index("app/core.py") < order.index("app/uses.py")
    assert "tests/test_core.py" not in order or order.index("tests/test_core.py") > order.index(
        "app/uses.py"
    )


def test_overlapping_windows_merge_into_one():
    text = "".join(("needle\n" if n in (10, 20) else f"l{n}\n") for n in range(1, 41))
    pack = build_pack(["needle"], FakeSearch({"a.py": text}))
    assert [(w.start, w.end) for w in pack.files[0].windows] == [(5, 26)]
    assert pack.files[0].windows[0].text == "".join(split_lines(text)[4:26])
    assert len(pack.citations) == 1


def test_every_window_gets_a_citation_in_reading_order():
    files = {"src/a.py": _window_file([300, 300]), "src/b.py": _window_file([300, 300])}
    pack = build_pack(["hit_seed"], FakeSearch(files))
    windows = [(f.path, w.start, w.end) for f in pack.files for w in f.windows]
    assert [(c.path, c.start, c.end) for c in pack.citations] == windows
    assert [c.id for c in pack.citations] == ["R1", "R2", "R3", "R4"]
    assert {c.sha for c in pack.citations} == {SHA}


@pytest.mark.parametrize(
    ("path", "factor"),
    [
        ("src/app.py", 1.0),
        ("tests/test_app.py", TEST_FACTOR),
        ("pkg/app_test.go", TEST_FACTOR),
        ("web/Button.spec.tsx", TEST_FACTOR),
        ("docs/usage.md", DOCS_FACTOR),
        ("CHANGES.rst", DOCS_FACTOR),
        ("pyproject.toml", DATA_FACTOR),
        (".github/workflows/ci.yml", DATA_FACTOR),
        ("vendor/lib/x.go", VENDORED_FACTOR),
        ("static/app.min.js", VENDORED_FACTOR),
    ],
)
def test_path_factor(path, factor):
    assert path_factor(path) == factor
    assert VENDORED_FACTOR < DATA_FACTOR <= DOCS_FACTOR < TEST_FACTOR < 1.0


def test_keywords_only_spend_the_searches_seeds_leave_over():
    search = FakeSearch({"a.py": "pager\n"})
    build_pack(_seeds(12), search, keywords=["pager"])
    assert "pager" not in search.calls
    search = FakeSearch({"src/pager.py": "pager\n", "src/other.py": "seed_number_00\n"})
    pack = build_pack(_seeds(1), search, keywords=["pager", "other"])
    assert search.calls == ["seed_number_00", "pager", "other"]
    assert [f.path for f in pack.files] == ["src/other.py", "src/pager.py"]


def test_a_hit_qualified_name_still_looks_up_its_definition_with_leftover_budget():
    files = {
        "tests/test_fmt.py": "HelpFormatter.write_usage(x)\n",
        "src/fmt.py": "class HelpFormatter:\n    def write_usage(self):\n        pass\n",
    }
    search = FakeSearch(files)
    pack = build_pack(["HelpFormatter.write_usage"], search)
    assert search.calls == ["HelpFormatter.write_usage", "write_usage"]
    assert pack.files[0].path == "src/fmt.py"


def test_a_candidate_that_matches_nothing_gives_its_slot_to_the_next_one():
    text = "".join(f"seed_number_{i:02d}\n" for i in range(3, 12))
    search = FakeSearch({"a.py": text})
    pack = build_pack(_seeds(12), search)
    assert search.calls == _seeds(11)  # three misses, then the first eight that hit
    assert pack.seeds == [f"seed_number_{i:02d}" for i in range(3, 11)]
    assert len(pack.seeds) == MAX_SEEDS == 8 and pack.searches == 11


def test_once_eight_seeds_hit_no_further_candidate_is_searched():
    search = FakeSearch({"a.py": "".join(f"seed_number_{i:02d}\n" for i in range(12))})
    pack = build_pack(_seeds(12), search, keywords=["seed_number_11"])
    assert search.calls == _seeds(8)
    assert pack.seeds == _seeds(8) and pack.searches == 8


def test_misses_spend_the_whole_budget_of_exactly_twelve_and_are_not_reported():
    search = FakeSearch({"a.py": "seed_number_11\n"})
    pack = build_pack(_seeds(13), search, keywords=["seed"])
    assert search.calls == _seeds(12) and pack.searches == MAX_SEARCHES
    assert pack.seeds == ["seed_number_11"]


def test_a_refilled_seed_weighs_as_the_slot_it_takes():
    files = {"src/late.py": "seed_number_02\n", "src/early.py": "seed_number_03\n"}
    results = run_searches(_seeds(4), FakeSearch(files), MAX_SEARCHES)
    assert [(r.query, r.rank, r.seed) for r in results if r.hits] == [
        ("seed_number_02", 0, "seed_number_02"),
        ("seed_number_03", 1, "seed_number_03"),
    ]


class PathSearch(FakeSearch):
    """FakeSearch plus a path hit for ``pkg.mod`` -> ``pkg/mod.py``, like ``LocalGitGrep``."""

    def search(self, seed: str) -> list[Hit]:
        hits = super().search(seed)
        if seed == "pkg.mod":
            hits.insert(0, Hit("pkg/mod.py", 1, kind="path"))
        return hits


def test_a_path_hit_is_not_diluted_by_the_files_that_mention_the_name():
    files = {f"pkg/user_{i}.py": "import pkg.mod\n" for i in range(7)}
    files["pkg/user_0.py"] += "helper_fn()\n"
    files |= {"pkg/a.py": "helper_fn\n", "pkg/b.py": "helper_fn\n"}
    files["pkg/mod.py"] = "def run():\n    pass\n"
    pack = build_pack(["pkg.mod", "helper_fn"], PathSearch(files))
    assert [f.path for f in pack.files][:2] == ["pkg/mod.py", "pkg/user_0.py"]
