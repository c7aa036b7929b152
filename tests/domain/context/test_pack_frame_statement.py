"""A CPython frame's printed statement anchors the frame where the base has it: the reporter's
version and the base differ, so the printed line number can sit on another statement or in
another function of the same name. Real parser; the anchors the pack ranks and windows by,
read through its local search of a real git repository."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.pack_signals import frame_anchors
from veranda_dagster.domain.intake.ticket_signals import (
    MAX_FRAME_CODE_CHARS,
    MIN_FRAME_CODE_CHARS,
    traceback_frames,
)


def _tb(statement_lines: str, line: int = 5, function: str = "get") -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/venv/lib/python3.12/site-packages/pkg/web.py", line {line}, in {function}\n'
        f"{statement_lines}"
        "ValueError: bad\n"
    )


@pytest.mark.parametrize(
    ("printed", "code"),
    [
        ("    total = compute(request.args)\n", "total = compute(request.args)"),
        (  # 3.11's markers under the statement are not part of it
            "    total = compute(request.args)\n            ^^^^^^^^^^^^^^^^^^^^^^\n",
            "total = compute(request.args)",
        ),
        ("    raise\n", None),  # shorter than MIN_FRAME_CODE_CHARS: on too many lines
        ("", None),  # the next line is the exception, not indented: no statement printed
        ('  File "/venv/pkg/other.py", line 3, in f\n', None),  # another frame
        ("    ^^^^^^^^^^^^\n", None),  # markers alone
    ],
)
def test_the_printed_statement_is_read_with_its_frame(printed: str, code: str | None) -> None:
    frames = [f for f in traceback_frames(_tb(printed)) if f.path == "pkg/web.py"]
    assert [f.code for f in frames] == [code]
    assert len("raise") < MIN_FRAME_CODE_CHARS


def test_a_printed_line_past_max_frame_code_chars_is_no_statement() -> None:
    longest = "x = " + "a" * (MAX_FRAME_CODE_CHARS - 4)
    too_long = longest + "a"
    for statement, code in ((longest, longest), (too_long, None)):
        [frame] = [f for f in traceback_frames(_tb(f"    {statement}\n")) if f.path == "pkg/web.py"]
        assert frame.code == code


WEB = """\
class Page:
    def get(self, request):
        return render(request)


class Api:
    def get(self, request):
        payload = load(request)
        total = compute(request.args)
        return payload, total


def render(request):
    total = compute(request.args)
    body = template(request, total)
    return body
"""
"""Two ``def get``; ``total = compute(request.args)`` is at line 9 (in ``Api.get``) and at 14
(in ``render``); ``body = template(request, total)`` only at 15, in ``render``."""
COMPUTE = "    total = compute(request.args)\n"
TEMPLATE = "    body = template(request, total)\n"


def _anchor(tmp_path, text: str) -> int:
    repo = make_repo(tmp_path / "repo", {"pkg/web.py": WEB, "pkg/__init__.py": ""})
    anchors = frame_anchors(text, LocalGitGrep(repo))
    assert anchors is not None
    [anchor] = [a for a in anchors if a.path == "pkg/web.py"]
    return anchor.line


@pytest.mark.parametrize(
    ("name", "printed", "line", "function", "anchor"),
    [
        # printed line 3 is in Page.get (an older, shorter file): the statement is at 9
        ("drifted into another get", COMPUTE, 3, "get", 9),
        # nearest to 15 is render's copy (14), but the frame ran in a get: Api.get's line 9
        ("the frame's function over the nearest copy", COMPUTE, 15, "get", 9),
        # no def post here (a wrapper, a renamed method): the statement wherever it is
        ("a function the file does not define", TEMPLATE, 3, "post", 15),
        # twins: the rule off is the line-number rule as before
        ("no statement printed: the printed line", "", 3, "get", 3),
        ("a statement no get holds: the nearest def get", TEMPLATE, 15, "get", 7),
        ("a statement the file lacks: the printed line", "    x = missing(thing)\n", 9, "get", 9),
    ],
)
def test_the_printed_statement_anchors_the_frame(
    tmp_path, name: str, printed: str, line: int, function: str, anchor: int
) -> None:
    assert _anchor(tmp_path, _tb(printed, line, function)) == anchor, name
