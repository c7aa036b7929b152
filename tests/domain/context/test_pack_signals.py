"""The ticket signals on real git repositories built here: traceback frames, error messages,
dotted module names and the full-text ranking, each through ``build_pack`` over ``LocalGitGrep``
(the same seam ``veranda pack`` uses), asserting which files and lines the pack holds."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context import pack_signals, pack_windows
from veranda_dagster.domain.context.code_search import Hit, LocalGitGrep, split_lines, window_bounds
from veranda_dagster.domain.context.pack import build_local_pack
from veranda_dagster.domain.context.pack_signals import (
    FRAME_DECAY,
    FRAME_WEIGHT,
    LINK_WEIGHT,
    MAX_PROJECT_FRAMES,
    SIGNAL_FRAMES,
    SIGNAL_FULL_TEXT,
    SIGNAL_LINKS,
)
from veranda_dagster.domain.context.pack_windows import CLIPPED_FUNCTION_BYTES
from veranda_dagster.domain.context.retrieval import build_pack
from veranda_dagster.domain.context.seeds import seed_candidates
from veranda_dagster.domain.core.bounds import (
    MAX_FUNCTION_WINDOW_BYTES,
    MAX_PACK_BYTES,
    MAX_SEARCHES,
)
from veranda_dagster.domain.core.models import Ticket, Window


def _filler(name: str, n: int) -> str:
    return "".join(f"def {name}_{i}(value):\n    return value + {i}\n\n\n" for i in range(n))


CONVERT = '''def convert(value, param, ctx):
    """Turn the option's text into an int."""
    if isinstance(value, int):
        return value
    try:
        return int(value)
    except ValueError:
        self.fail(f"{value!r} is not a valid integer.", param, ctx)
'''

CORE = _filler("step", 60) + CONVERT + _filler("after", 5)
CALLER = _filler("outer", 20) + "def main(args):\n    return convert(args[0], None, None)\n"


@pytest.fixture
def repo(tmp_path):
    files = {
        "src/pkg/types.py": CORE,
        "src/pkg/cli.py": CALLER,
        "src/pkg/noise.py": _filler("noise", 30),
        "tests/test_types.py": "from pkg.types import convert\n\nconvert('1', 0, 0)\n",
    }
    files |= {f"src/pkg/m{i}.py": _filler(f"m{i}", 10) for i in range(8)}
    return make_repo(tmp_path / "repo", files)


def _pack(repo, title: str, body: str):
    ticket = Ticket(id="T-1", source="linear", title=title, description=body)
    return build_local_pack(repo, ticket, [])


def _convert_span() -> tuple[int, int]:
    start = CORE.splitlines().index("def convert(value, param, ctx):") + 1
    return start, start + CONVERT.count("\n") - 1


TRACEBACK = """Running the tool crashes:

Traceback (most recent call last):
  File "/home/me/run.py", line 3, in <module>
    main(sys.argv)
  File "/venv/lib/python3.11/site-packages/pkg/cli.py", line 82, in main
    return convert(args[0], None, None)
  File "/venv/lib/python3.11/site-packages/pkg/types.py", line 9999, in convert
    return int(value)
RuntimeError: boom
"""


def test_a_traceback_frame_puts_the_deepest_project_frame_first_with_its_whole_function(repo):
    out = _pack(repo, "Crash on startup", TRACEBACK)
    paths = [f["path"] for f in out["files"]]
    # the deepest project frame (types.py, printed last) outranks the outer one (cli.py);
    # the user's own script is outside the project and resolves to nothing
    assert paths[:2] == ["src/pkg/types.py", "src/pkg/cli.py"]
    start, end = _convert_span()  # the printed line 9999 is past the file: the function wins
    # (the bytes left over widen it by a few lines: the function must be whole inside it)
    whole = [w for w in out["files"][0]["windows"] if w["start"] <= start and end <= w["end"]]
    assert len(whole) == 1
    assert "".join(split_lines(CORE)[start - 1 : end]) in whole[0]["text"]
    # the outer frame names line 82 of cli.py: its window holds that line
    assert any(w["start"] <= 82 <= w["end"] for w in out["files"][1]["windows"])


def test_a_quoted_error_message_finds_the_literal_that_prints_it(repo):
    body = "When I pass --count abc I get:\n\nError: Invalid value: 'abc' is not a valid integer.\n"
    out = _pack(repo, "bad count option", body)
    assert out["files"][0]["path"] == "src/pkg/types.py"
    raise_line = (
        CORE.splitlines().index(
            '        self.fail(f"{value!r} is not a valid integer.", param, ctx)'
        )
        + 1
    )
    assert any(w["start"] <= raise_line <= w["end"] for w in out["files"][0]["windows"])
    search = LocalGitGrep(repo)
    build_pack([], search, ticket_text=body)
    assert "is not a valid integer" in search.calls  # fixed string, values cut away


def test_a_dotted_module_path_names_its_file(tmp_path):
    files = {f"pkg/sub/user_{i}.py": "import pkg.sub.engine\n" for i in range(6)}
    files["pkg/sub/engine.py"] = _filler("run", 3)
    files |= {f"pkg/other_{i}.py": "engine = None\n" for i in range(6)}
    repo = make_repo(tmp_path / "repo", files)
    out = _pack(repo, "Engine stalls", "Calling `pkg.sub.engine.run_1` hangs forever.")
    assert out["files"][0]["path"] == "pkg/sub/engine.py"


def test_full_text_ranking_finds_a_file_no_seed_names_and_costs_one_of_twelve(repo, tmp_path):
    files = {f"src/app/util_{i}.py": _filler(f"util{i}", 4) for i in range(6)}
    files["src/app/throttle.py"] = (
        _filler("helper", 3)
        + "def pause_between_requests(delay):\n    # throttle outgoing requests, backoff\n"
        "    sleep(delay)  # throttle\n"
    )
    other = make_repo(tmp_path / "other", files)
    body = "Requests are not throttled: there is no backoff, the throttle delay is ignored."
    search = LocalGitGrep(other)
    pack = build_pack(seed_candidates([body]), search, ticket_text=body)
    assert pack.files[0].path == "src/app/throttle.py"
    assert pack.unavailable == []
    # thirteen seed candidates that all miss: the full-text ranking takes one of the twelve
    search = LocalGitGrep(other)
    candidates = [f"missing_name_{i:02d}" for i in range(13)]
    pack = build_pack(candidates, search, ticket_text=body)
    assert pack.searches == MAX_SEARCHES == 12
    assert search.calls == candidates[:11]


class IndexOnlySearch:
    """GitHub's code index before a clone exists: searches and windows, no file listing and no
    texts to rank."""

    sha = "b" * 40

    def __init__(self, files: dict[str, str]) -> None:
        self.files = {p: split_lines(t) for p, t in files.items()}
        self.calls: list[str] = []

    def search(self, seed: str) -> list[Hit]:
        self.calls.append(seed)
        return [
            Hit(path, n, line)
            for path, lines in self.files.items()
            for n, line in enumerate(lines, 1)
            if seed.lower() in line.lower()
        ]

    def read_window(self, path: str, line: int) -> Window:
        start, end = window_bounds(line, len(self.files[path]))
        return Window(start=start, end=end, text="".join(self.files[path][start - 1 : end]))


LINKED = """The result is off by one after the upgrade. The code in question:
https://example.org/acme/pkg/blob/0a2b96f/src/pkg/types.py#L{line}
(and again https://example.org/acme/pkg/blob/main/src/pkg/types.py#L{line}, and
https://example.org/acme/pkg/blob/main/src/pkg/gone.py#L3, a file that no longer exists)
"""


def test_a_linked_source_line_leads_the_pack_with_its_whole_function(repo, monkeypatch):
    monkeypatch.setattr(pack_windows, "MAX_WIDEN_LINES", 0)  # the plan, before widening
    start, end = _convert_span()
    out = _pack(repo, "Off by one", LINKED.format(line=start + 5))
    assert out["files"][0]["path"] == "src/pkg/types.py"
    windows = [(w["start"], w["end"]) for w in out["files"][0]["windows"]]
    assert (start, end) in windows  # the linked line's whole function
    monkeypatch.setattr(pack_signals, "source_links", lambda text: [])
    out = _pack(repo, "Off by one", LINKED.format(line=start + 5))
    types = [f for f in out["files"] if f["path"] == "src/pkg/types.py"]
    assert (start, end) not in [(w["start"], w["end"]) for f in types for w in f["windows"]]


def test_a_file_linked_twice_counts_once():
    class Listing(IndexOnlySearch):
        def paths(self) -> list[str]:
            return list(self.files)

        def file_text(self, path: str) -> list[str] | None:
            return self.files.get(path)

    search = Listing({"src/pkg/types.py": CORE, "src/pkg/cli.py": CALLER})
    anchors = pack_signals.link_anchors(LINKED.format(line=70), search)
    assert [(a.path, a.line, a.weight) for a in anchors] == [
        ("src/pkg/types.py", 70, pack_signals.LINK_WEIGHT)
    ]  # the same line linked twice is one anchor; the gone file resolves to nothing
    pack = build_pack([], search, ticket_text=LINKED.format(line=70))
    assert [f.path for f in pack.files] == ["src/pkg/types.py"]


def test_the_pack_says_which_signals_a_code_index_without_a_clone_lacks():
    search = IndexOnlySearch({"pkg/types.py": CORE})
    pack = build_pack(["convert"], search, ticket_text=TRACEBACK)
    assert pack.unavailable == [SIGNAL_FRAMES, SIGNAL_FULL_TEXT]
    assert [f.path for f in pack.files] == ["pkg/types.py"]
    linked = build_pack(["convert"], search, ticket_text=LINKED.format(line=3))
    assert linked.unavailable == [SIGNAL_LINKS, SIGNAL_FULL_TEXT]
    # without a traceback, frames are not missing, only the ranking is
    assert build_pack(["convert"], search, ticket_text="convert fails").unavailable == [
        SIGNAL_FULL_TEXT
    ]


def test_whole_functions_fit_even_when_six_files_share_the_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(pack_windows, "MAX_WIDEN_LINES", 0)  # the plan, before widening
    body = "".join(f"    total += {i}  # accumulate the running sum of values\n" for i in range(50))
    function = "def shared_hook(values):\n    total = 0\n" + body + "    return total\n"
    assert 2_000 < len(function.encode()) <= MAX_FUNCTION_WINDOW_BYTES
    files = {f"src/mod_{i}.py": _filler(f"f{i}", 8) + function for i in range(6)}
    search = LocalGitGrep(make_repo(tmp_path / "repo", files))
    pack = build_pack(["shared_hook"], search, ticket_text="`shared_hook` is wrong")
    assert len(pack.files) == 6 and pack.bytes <= MAX_PACK_BYTES
    first = pack.files[0].windows[0]
    assert first.text == function  # one whole body, though the fair share is 2,000 bytes
    assert all(f.windows for f in pack.files)  # and every later file still has its window


def test_a_function_over_the_window_bound_gets_the_part_of_its_body_around_the_line(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(pack_windows, "MAX_WIDEN_LINES", 0)  # the plan, before widening
    body = "".join(
        f"    total += {i}  # a long body, one line after another, padding\n" for i in range(120)
    )
    function = "def big_hook(values):\n    total = 0\n" + body + "    return total\n"
    assert len(function.encode()) > MAX_FUNCTION_WINDOW_BYTES
    search = LocalGitGrep(make_repo(tmp_path / "repo", {"src/big.py": function}))
    pack = build_pack(["big_hook"], search, ticket_text="`big_hook` is wrong")
    [window] = pack.files[0].windows
    assert window.start == 1 and window.end > 12  # more than twelve lines of the body ...
    assert len(window.text.encode()) <= CLIPPED_FUNCTION_BYTES  # ... but not the whole of it
    assert window.end < function.count("\n")


def test_a_traceback_line_deep_in_a_long_function_is_seen_with_the_lines_around_it(tmp_path):
    body = "".join(f"    total += {i}  # padding padding padding padding\n" for i in range(300))
    function = "def big_hook(values):\n    total = 0\n" + body + "    return total\n"
    search = LocalGitGrep(make_repo(tmp_path / "repo", {"src/pkg/big.py": function}))
    ticket = 'Traceback:\n  File "/site-packages/pkg/big.py", line 200, in big_hook\nKeyError: 1'
    pack = build_pack([], search, ticket_text=ticket)
    [window] = [w for w in pack.files[0].windows if w.start <= 200 <= w.end]
    assert window.start < 200 - 6 and window.end > 200 + 6  # wider than the 12-line window
    assert window.start > 1  # and still a clip of the function, not its whole body


def test_past_the_corpus_bound_search_uses_git_grep_and_says_full_text_is_unavailable(
    repo, monkeypatch
):
    from veranda_dagster.domain.clone import repo_corpus

    monkeypatch.setattr(repo_corpus, "MAX_CORPUS_BYTES", len(CORE.encode()))
    search = LocalGitGrep(repo)
    assert search.corpus() is None
    pack = build_pack(["convert"], search, ticket_text="convert fails")
    assert pack.unavailable == [SIGNAL_FULL_TEXT]
    assert pack.files[0].path == "src/pkg/types.py"  # git grep still finds the definition


def test_the_full_text_index_holds_at_most_its_bound(monkeypatch):
    from veranda_dagster.domain.context import full_text

    monkeypatch.setattr(full_text, "MAX_FULL_TEXT_FILES", 2)
    index = full_text.FullTextIndex((f"f{i}.py", "needle") for i in range(3))
    assert index.paths == ["f0.py", "f1.py"]


class _Listing(IndexOnlySearch):
    """An index that lists its files and has their texts (a clone's)."""

    def paths(self) -> list[str]:
        return list(self.files)

    def file_text(self, path: str) -> list[str] | None:
        return self.files.get(path)


@pytest.mark.parametrize("count", [MAX_PROJECT_FRAMES, MAX_PROJECT_FRAMES + 1])
def test_at_most_the_bound_of_project_frames_are_weighed_deepest_first(count):
    """``MAX_PROJECT_FRAMES``: a traceback through one project file more than the bound weighs
    the deepest ``MAX_PROJECT_FRAMES`` (each ``FRAME_DECAY`` of the one below) and not the
    outermost; its twin, exactly the bound, weighs every frame."""
    files = {f"src/pkg/m{i}.py": _filler(f"m{i}", 3) for i in range(count)}
    trace = "Traceback (most recent call last):\n" + "".join(
        f'  File "/venv/lib/python3.12/site-packages/pkg/m{i}.py", line 2, in m{i}_0\n'
        f"    return value + 0\n"
        for i in range(count)
    )
    anchors = pack_signals.frame_anchors(trace + "KeyError: 1\n", _Listing(files))
    assert anchors is not None
    deepest = [f"src/pkg/m{i}.py" for i in reversed(range(count))][:MAX_PROJECT_FRAMES]
    assert [a.path for a in anchors] == deepest
    assert [a.weight for a in anchors] == pytest.approx(
        [FRAME_WEIGHT * FRAME_DECAY**k for k in range(MAX_PROJECT_FRAMES)]
    )


def test_links_anchor_at_most_the_bound_of_files_and_every_line_of_those():
    """``MAX_PROJECT_FRAMES`` for links: linked lines in one file more than the bound anchor the
    first ``MAX_PROJECT_FRAMES`` files; a further line of a file already anchored still counts
    (it names no new file), the file past the bound does not."""
    files = {f"src/pkg/m{i}.py": _filler(f"m{i}", 3) for i in range(MAX_PROJECT_FRAMES + 1)}
    url = "https://example.org/acme/pkg/blob/main/src/pkg/m{}.py#L{}"
    links = [url.format(i, 2) for i in range(MAX_PROJECT_FRAMES + 1)] + [url.format(0, 5)]
    anchors = pack_signals.link_anchors("See " + " and ".join(links), _Listing(files))
    assert anchors is not None
    assert [(a.path, a.line) for a in anchors] == [
        *((f"src/pkg/m{i}.py", 2) for i in range(MAX_PROJECT_FRAMES)),
        ("src/pkg/m0.py", 5),
    ]
    assert anchors[0].weight == anchors[-1].weight == LINK_WEIGHT
