"""The statement a traceback printed, read in every form that prints one: pytest's short form
(below ``path:12: in func``), pytest's long form (the ``>`` line above ``path:12: Error``),
IPython 8 (``-> 41 code`` under ``File …:41, in Class.method(…)``) and IPython 7
(``---> 41 code``). Each anchors its frame on the line the base holds it at, as CPython's
does (``test_pack_frame_statement``); IPython 8's qualified ``Class.method`` finds its ``def``."""

from __future__ import annotations

import pytest

from tests.domain.context.test_pack_frame_statement import WEB
from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.pack_signals import frame_anchors
from veranda_dagster.domain.intake.ticket_signals import (
    MAX_IPYTHON_CONTEXT_LINES,
    MAX_PYTEST_LOOKBACK_LINES,
    traceback_frames,
)

STATEMENT = "total = compute(request.args)"

PYTEST_SHORT = f"pkg/web.py:3: in get\n    {STATEMENT}\nE   ValueError: bad\n"
PYTEST_LONG = (
    "    def get(self, request):\n"
    "        payload = load(request)\n"
    f">       {STATEMENT}\n"
    "E       ValueError: bad\n"
    "\n"
    "pkg/web.py:3: ValueError\n"
)
IPYTHON8 = (
    "File ~/venv/lib/python3.11/site-packages/pkg/web.py:3, in Api.get(self, request)\n"
    "      1 def get(self, request):\n"
    "      2     payload = load(request)\n"
    f"----> 3     {STATEMENT}\n"
    "\n"
    "ValueError: bad\n"
)
IPYTHON7 = (
    "~/venv/lib/python3.8/site-packages/pkg/web.py in get(self, request)\n"
    "      1 def get(self, request):\n"
    "      2     payload = load(request)\n"
    f"----> 3     {STATEMENT}\n"
    "\n"
    "ValueError: bad\n"
)


def _web_frame(text: str):
    [frame] = [f for f in traceback_frames(text) if f.path == "pkg/web.py"]
    return frame


@pytest.mark.parametrize(
    ("form", "text", "code"),
    [
        ("pytest short", PYTEST_SHORT, STATEMENT),
        ("pytest long", PYTEST_LONG, STATEMENT),
        ("IPython 8", IPYTHON8, STATEMENT),
        ("IPython 7", IPYTHON7, STATEMENT),
        # twins: nothing of the form's statement there, so no statement
        ("pytest short, exception below", "pkg/web.py:3: in get\nE   ValueError: bad\n", None),
        (  # a > line of the frame above the separator belongs to that frame
            "pytest long, > past a separator",
            f">       {STATEMENT}\n_ _ _ _ _ _\n\n    def get(self):\n        pass\n\n"
            "pkg/web.py:3: E\n",
            None,
        ),
        ("IPython 8, arrow numbered another line", IPYTHON8.replace("----> 3", "----> 4"), None),
        (
            "IPython 8, context ends before the arrow",
            IPYTHON8.replace("      2", "\n      2"),
            None,
        ),
        ("IPython 7, arrow too short", IPYTHON7.replace(STATEMENT, "raise"), None),
    ],
)
def test_each_form_reads_its_printed_statement(form: str, text: str, code: str | None) -> None:
    assert _web_frame(text).code == code, form


def test_ipython8_keeps_the_qualified_function() -> None:
    assert _web_frame(IPYTHON8).function == "Api.get"


def test_the_pytest_lookback_is_bounded() -> None:
    """A ``>`` line further above than ``MAX_PYTEST_LOOKBACK_LINES`` is not read."""
    for source_lines, code in (
        (MAX_PYTEST_LOOKBACK_LINES - 1, STATEMENT),
        (MAX_PYTEST_LOOKBACK_LINES, None),
    ):
        text = (
            f">       {STATEMENT}\n"
            + "        x = 1\n" * source_lines
            + "pkg/web.py:3: ValueError\n"
        )
        assert _web_frame(text).code == code, source_lines


def test_the_ipython_arrow_search_is_bounded() -> None:
    """An arrow further below the header than ``MAX_IPYTHON_CONTEXT_LINES`` is not read."""
    header = "File ~/venv/site-packages/pkg/web.py:3, in get(self)\n"
    for context_lines, code in (
        (MAX_IPYTHON_CONTEXT_LINES - 1, STATEMENT),
        (MAX_IPYTHON_CONTEXT_LINES, None),
    ):
        text = header + "      1 x = 1\n" * context_lines + f"----> 3     {STATEMENT}\n\n"
        assert _web_frame(text).code == code, context_lines


# ``WEB``: the statement is at line 9 (``Api.get``) and 14 (``render``); every form above
# printed line 3, inside ``Page.get`` of the base (the reporter's file was older and shorter).
@pytest.mark.parametrize(
    ("form", "text", "anchor"),
    [
        ("pytest short", PYTEST_SHORT, 9),
        ("pytest long", PYTEST_LONG, 9),  # no function printed: the copy nearest line 3
        ("IPython 8", IPYTHON8, 9),
        ("IPython 7", IPYTHON7, 9),
        # twins: without the statement, the line-number rules as before
        ("pytest short, no statement", "pkg/web.py:3: in get\nE   ValueError: bad\n", 3),
        ("IPython 8, qualified, no statement", IPYTHON8.replace("----> 3", "----> 4"), 3),
        (  # a qualified function the file does not hold at that line: its nearest def
            "IPython 8, qualified, printed past its def",
            IPYTHON8.replace(":3,", ":12,").replace("----> 3", "----> 4"),
            7,
        ),
    ],
)
def test_each_form_anchors_its_frame_on_the_statement(
    tmp_path, form: str, text: str, anchor: int
) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/web.py": WEB, "pkg/__init__.py": ""})
    anchors = frame_anchors(text, LocalGitGrep(repo))
    assert anchors is not None
    [found] = [a for a in anchors if a.path == "pkg/web.py"]
    assert found.line == anchor, form
