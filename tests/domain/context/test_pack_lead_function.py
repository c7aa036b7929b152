"""Issue 35, windows on the edit: a lead file's named function is packed whole up to
``MAX_FUNCTION_WINDOW_BYTES``, half the pack (the fix is in the first file most of the time,
and a long function's edit is as often past the part a clipped window shows); a later file
keeps to its share, and every file keeps its first window."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context import pack_windows
from veranda_dagster.domain.context.code_search import LocalGitGrep, window_bounds
from veranda_dagster.domain.context.function_spans import MAX_SCAN_LINES, enclosing_function
from veranda_dagster.domain.context.pack_windows import (
    CLIPPED_FUNCTION_BYTES,
    LEAD_FILES,
    MAX_TOPIC_SCAN_LINES,
    FileEvidence,
    _Candidate,
    file_windows,
    spend_budget,
)
from veranda_dagster.domain.context.retrieval import build_pack
from veranda_dagster.domain.core.bounds import (
    MAX_FUNCTION_WINDOW_BYTES,
    MAX_PACK_BYTES,
    MAX_PACK_FILES,
    MAX_WINDOWS_PER_FILE,
)
from veranda_dagster.domain.core.models import Window

STEP = "    value = value + compute_step(value, {k:03d})  # one more step of the pipeline\n"


def _long_function(steps: int) -> str:
    body = "".join(STEP.format(k=k) for k in range(steps))
    return f"def run_pipeline(value):\n{body}    return value  # the last line\n"


def _module(function: str) -> str:
    return f"import os\n\n\ndef compute_step(value, k):\n    return value + k\n\n\n{function}"


@pytest.mark.parametrize(
    ("case", "steps", "whole"),
    [
        ("longer than a function window, within half the pack", 60, True),
        ("just past a function window", 53, True),
        ("adversarial: longer than half the pack", 90, False),
    ],
)
def test_the_first_files_named_function_is_packed_whole_up_to_half_the_pack(
    tmp_path, case, steps, whole
):
    function = _long_function(steps)
    size = len(function.encode())
    assert size > 4_000, case  # longer than the bound was before this rule
    assert (size <= MAX_FUNCTION_WINDOW_BYTES) is whole, case
    text = _module(function)
    repo = make_repo(tmp_path / "repo", {"pkg/pipeline.py": text})
    ticket = "`run_pipeline` returns the wrong value"
    pack = build_pack(["run_pipeline"], LocalGitGrep(repo), ticket_text=ticket)
    [packed] = pack.files
    last = text.splitlines().index("    return value  # the last line") + 1
    assert any(w.start <= last <= w.end for w in packed.windows) is whole, case
    assert pack.bytes == sum(len(w.text.encode()) for w in packed.windows) <= MAX_PACK_BYTES


def _text(start: int, end: int, width: int) -> Window:
    lines = "".join(f"{'x' * (width - 1)}\n" for _ in range(start, end + 1))
    return Window(start=start, end=end, text=lines)


def _candidate(function_bytes: int) -> _Candidate:
    """A whole function of ``function_bytes`` with its 12-line window (480 bytes) to fall
    back on."""
    return _Candidate(_text(1, function_bytes // 100, 100), 1.0, short=_text(10, 21, 40))


@pytest.mark.parametrize(
    ("case", "rank", "later_first", "whole"),
    [
        ("the first file", 0, 400, True),
        ("the second file", 1, 400, True),
        ("adversarial: the third file keeps to its share", LEAD_FILES, 400, False),
        ("adversarial: the later files' first windows come first", 0, 2_000, False),
    ],
)
def test_only_a_lead_file_pays_for_a_long_function_and_never_with_the_others_first_windows(
    case, rank, later_first, whole
):
    function_bytes = 5_000
    assert function_bytes <= MAX_FUNCTION_WINDOW_BYTES
    candidates = [
        (f"f{i}.py", [_candidate(function_bytes)])
        if i == rank
        else (f"f{i}.py", [_Candidate(_text(1, later_first // 40, 40), 1.0)])
        for i in range(6)
    ]
    kept = spend_budget(candidates, MAX_PACK_BYTES)
    [window] = kept[f"f{rank}.py"]
    assert (window.end == function_bytes // 100) is whole, case
    assert sum(len(w.text) for ws in kept.values() for w in ws) <= MAX_PACK_BYTES
    assert all(kept[path] for path, _ in candidates)  # every file keeps its first window


def _function(name: str, words: dict[int, str], length: int = 30) -> str:
    """A function of ``length`` body lines; body line ``k`` carries ``words[k]`` when given."""
    body = "".join(
        f"    step_{k:02d} = {words.get(k, 'plain_value')}({k})  # body line\n"
        for k in range(length)
    )
    return f"def {name}(value):\n{body}    return value\n\n\n"


@pytest.mark.parametrize(
    ("case", "functions", "whole"),
    [
        (
            "two hits in one function",
            [("lead", {2: "token"}), ("target", {3: "token", 20: "token"})],
            True,
        ),
        (
            "adversarial: one hit in the function",
            [("lead", {2: "token"}), ("target", {3: "token"})],
            False,
        ),
        (
            "adversarial: the second hit in another function",
            [("lead", {2: "token"}), ("target", {3: "token"}), ("other", {20: "token"})],
            False,
        ),
    ],
)
def test_two_plain_hits_in_one_function_pack_the_whole_function(tmp_path, case, functions, whole):
    text = "".join(_function(name, words) for name, words in functions)
    lines = text.splitlines(keepends=True)
    search = LocalGitGrep(make_repo(tmp_path / "repo", {"pkg/mod.py": text}))
    hits = {n: 1.0 for n, line in enumerate(lines, 1) if "token(" in line}
    planned = file_windows(FileEvidence("pkg/mod.py", lines=hits), search)
    target = text.splitlines().index("def target(value):") + 1
    last = target + 31  # its ``return value``
    assert lines[last - 1] == "    return value\n"
    assert any(c.window.start <= target and last <= c.window.end for c in planned) is whole, case


def _deep_traceback(lines_in_body: int) -> tuple[str, str]:
    body = "".join(
        f"    total += {i}  # padding padding padding padding\n" for i in range(lines_in_body)
    )
    function = "def big_hook(values):\n    total = 0\n" + body + "    return total\n"
    ticket = 'Traceback:\n  File "/site-packages/pkg/big.py", line 100, in big_hook\nKeyError: 1'
    return function, ticket


def test_a_frame_deep_in_a_long_function_of_the_first_file_gets_half_a_function_window(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(pack_windows, "MAX_WIDEN_LINES", 0)  # the plan, before widening
    function, ticket = _deep_traceback(200)
    assert len(function.encode()) > MAX_FUNCTION_WINDOW_BYTES  # too long to pack whole
    search = LocalGitGrep(make_repo(tmp_path / "repo", {"src/pkg/big.py": function}))
    pack = build_pack([], search, ticket_text=ticket)
    [window] = [w for w in pack.files[0].windows if w.start <= 100 <= w.end]
    size = len(window.text.encode())
    share = MAX_PACK_BYTES // MAX_PACK_FILES
    assert share < size <= CLIPPED_FUNCTION_BYTES  # more than a later file's share
    assert window.start > 1 and window.end < function.count("\n")  # still a clip


@pytest.mark.parametrize(
    ("case", "rank", "clipped"),
    [
        ("the first file", 0, True),
        ("adversarial: a later file gets its 12-line window", LEAD_FILES, False),
    ],
)
def test_a_clip_longer_than_a_share_is_paid_only_by_a_lead_file(case, rank, clipped):
    clip = _text(40, 39 + CLIPPED_FUNCTION_BYTES // 100, 100)
    short = _text(60, 71, 40)
    candidates = [
        (f"f{i}.py", [_Candidate(clip, 1.0, short=short)])
        if i == rank
        else (f"f{i}.py", [_Candidate(_text(1, 10, 40), 1.0)])
        for i in range(6)
    ]
    kept = spend_budget(candidates, MAX_PACK_BYTES)
    [window] = kept[f"f{rank}.py"]
    assert (window == clip) is clipped and (window == short) is not clipped, case


def _def_with_body(body_lines: int) -> list[str]:
    return ["def long_body(value):\n", *["    value += 1\n"] * body_lines, "    return value\n"]


def test_a_function_span_is_walked_at_most_its_bound_of_lines_either_way():
    """``MAX_SCAN_LINES``: a function of exactly ``MAX_SCAN_LINES + 1`` lines is found whole from
    its ``def``; a longer one is cut ``MAX_SCAN_LINES`` lines below it; and from a line inside,
    the ``def`` is found up to ``MAX_SCAN_LINES - 1`` lines above and not one line further (a
    longer walk gets a plain window)."""
    fits = _def_with_body(MAX_SCAN_LINES - 1)
    assert enclosing_function(fits, 1) == (1, len(fits)) == (1, MAX_SCAN_LINES + 1)
    long = _def_with_body(MAX_SCAN_LINES + 10)
    assert enclosing_function(long, 1) == (1, MAX_SCAN_LINES + 1)  # cut, not the whole body
    assert enclosing_function(long, MAX_SCAN_LINES) == (1, MAX_SCAN_LINES + 1)
    assert enclosing_function(long, MAX_SCAN_LINES + 1) is None


class _Texts:
    """A search index that has one file's text: windows and the file's lines, no searches."""

    sha = "c" * 40

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path, self.lines = path, lines

    def search(self, seed: str) -> list:
        return []

    def file_text(self, path: str) -> list[str] | None:
        return self.lines if path == self.path else None

    def read_window(self, path: str, line: int) -> Window:
        start, end = window_bounds(line, len(self.lines))
        return Window(start=start, end=end, text="".join(self.lines[start - 1 : end]))


@pytest.mark.parametrize(
    ("case", "at", "topic"),
    [
        ("the ticket's words on the last line scanned", MAX_TOPIC_SCAN_LINES, True),
        ("one line past the scan", MAX_TOPIC_SCAN_LINES + 1, False),
    ],
)
def test_the_topic_line_is_looked_for_in_at_most_its_bound_of_lines(case, at, topic):
    """``MAX_TOPIC_SCAN_LINES``: a file the full-text ranking chose gets a window on the line
    that carries the ticket's words when it is within the first ``MAX_TOPIC_SCAN_LINES``
    lines; one line further it is not scanned and the file keeps its head."""
    lines = [f"setting_{i} = {i}\n" for i in range(MAX_TOPIC_SCAN_LINES + 50)]
    lines[at - 1] = "frobnicate_widget(setting_1)\n"
    search = _Texts("pkg/big.py", lines)
    weights = {"frobnicate": 5.0, "widget": 5.0}
    planned = file_windows(FileEvidence("pkg/big.py"), search, weights)
    covers = [c.window.start <= at <= c.window.end for c in planned]
    assert any(covers) is topic, case
    assert topic or planned[0].window.start == 1


@pytest.mark.parametrize("hits", [MAX_WINDOWS_PER_FILE, MAX_WINDOWS_PER_FILE + 1])
def test_a_file_contributes_at_most_its_bound_of_windows(hits):
    """``MAX_WINDOWS_PER_FILE``: hit lines far apart each get a window up to the bound (the
    best first); one more hit than the bound adds no window."""
    lines = [f"setting_{i} = {i}\n" for i in range(40 * (MAX_WINDOWS_PER_FILE + 2))]
    at = {20 + 40 * k: 10.0 - k for k in range(hits)}
    planned = file_windows(FileEvidence("pkg/conf.py", lines=at), _Texts("pkg/conf.py", lines))
    assert len(planned) == MAX_WINDOWS_PER_FILE
    best = list(at)[:MAX_WINDOWS_PER_FILE]
    assert all(c.window.start <= n <= c.window.end for c, n in zip(planned, best, strict=True))
