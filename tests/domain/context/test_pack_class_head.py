"""Issue 35, windows on the edit: a ticket that names a class hits its ``class`` line, and in a
long class the 12 lines there show only the docstring. A lead file's long class gets its head
(docstring, attributes, constructor) down to ``CLASS_WINDOW_BYTES``; a short class keeps the
12-line window, and a class nested in a function keeps the function's window."""

from __future__ import annotations

import pytest

from tests.fixtures.context.gitrepo import make_repo
from veranda_dagster.domain.context import pack_windows
from veranda_dagster.domain.context.code_search import LocalGitGrep
from veranda_dagster.domain.context.function_spans import class_span
from veranda_dagster.domain.context.pack_windows import CLASS_WINDOW_BYTES
from veranda_dagster.domain.context.retrieval import build_pack

CONSTRUCTOR = "        self.size = size  # the line a fix changes\n"


def _class(methods: int, indent: str = "") -> str:
    doc = "".join(f"{indent}    Usage note {k:02d}: how a widget is laid out.\n" for k in range(30))
    body = "".join(
        f"{indent}    def method_{k:02d}(self):\n{indent}        return self.size + {k}\n\n"
        for k in range(methods)
    )
    return (
        f'{indent}class Widget:\n{indent}    """A widget.\n\n{doc}{indent}    """\n\n'
        f"{indent}    def __init__(self, size):\n{indent}{CONSTRUCTOR}\n{body}"
    )


LONG = "import os\n\n\n" + _class(60)
SHORT = "import os\n\n\n" + _class(2)
NESTED = (
    "import os\n\n\ndef build(size):\n" + _class(2, indent="    ") + "    return Widget(size)\n"
)


@pytest.mark.parametrize(
    ("case", "text", "constructor_packed"),
    [
        ("a long class: its head down to the constructor", LONG, True),
        ("adversarial: a short class keeps its 12-line window", SHORT, False),
        ("adversarial: a class nested in a function keeps the function's window", NESTED, True),
    ],
)
def test_a_long_class_named_by_the_ticket_is_packed_from_its_head(
    tmp_path, monkeypatch, case, text, constructor_packed
):
    monkeypatch.setattr(pack_windows, "MAX_WIDEN_LINES", 0)  # the plan, before widening
    repo = make_repo(tmp_path / "repo", {"pkg/widget.py": text})
    pack = build_pack(["Widget"], LocalGitGrep(repo))
    [file] = pack.files
    lines = text.splitlines(keepends=True)
    head = next(n for n, line in enumerate(lines, 1) if "class Widget:" in line)
    edit = next(n for n, line in enumerate(lines, 1) if "# the line a fix changes" in line)
    assert edit - head > 30, case  # beyond the 12 lines at the ``class`` line
    assert any(w.start <= edit <= w.end for w in file.windows) is constructor_packed, case
    span = class_span(lines, head)
    assert span is not None
    size = len("".join(lines[span[0] - 1 : span[1]]).encode())
    assert (size > CLASS_WINDOW_BYTES) is (text is LONG), case
    if text is LONG:
        [window] = [w for w in file.windows if w.start <= head <= w.end]
        assert window.start == head and window.end < span[1]  # the head, not the whole class
        assert len(window.text.encode()) <= CLASS_WINDOW_BYTES


@pytest.mark.parametrize(
    ("case", "text", "line", "span"),
    [
        (
            "a top-level class",
            "class A:\n    x = 1\n\n    def f(self):\n        pass\ny = 2\n",
            1,
            (1, 5),
        ),
        ("a decorated class", "@dataclass\nclass A:\n    x: int\n", 2, (1, 3)),
        ("adversarial: a def line", "def f():\n    pass\n", 1, None),
        ("adversarial: a line inside the class", "class A:\n    x = 1\n", 2, None),
        ("adversarial: a line past the end", "class A:\n    x = 1\n", 9, None),
    ],
)
def test_class_span(case, text, line, span):
    assert class_span(text.splitlines(keepends=True), line) == span, case
