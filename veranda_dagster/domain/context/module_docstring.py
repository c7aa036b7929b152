"""Where a Python module's docstring ends, so the ranking can read a hit inside it as
documentation.

Why: a package's ``__init__.py`` often carries the package's reference page as its docstring
(an autosummary of every class it exports), so a ticket's class names all hit it, and it ranked
first while the fix went to the module defining the class. Lexical and bounded, like the rest of
the pack: the first statement of the file, when it is a string literal, up to its closing quotes,
at most ``MAX_DOCSTRING_LINES`` lines.
"""

from __future__ import annotations

import re

MAX_DOCSTRING_LINES = 5_000
"""Lines walked to find the closing quotes; a longer string is not read as a docstring."""
_OPENING = re.compile(r"""^[rRuU]?("\"\"|'''|"|')""")


def _blank_or_comment(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def module_docstring_end(lines: list[str]) -> int:
    """The 1-based last line of the module docstring of a Python file's ``lines``, 0 when the
    file's first statement is not a string literal (or it does not close within
    ``MAX_DOCSTRING_LINES``)."""
    start = 0
    while start < len(lines) and _blank_or_comment(lines[start]):
        start += 1
        if start >= MAX_DOCSTRING_LINES:
            return 0
    if start >= len(lines):
        return 0
    first = lines[start].strip()
    opening = _OPENING.match(first)
    if opening is None:
        return 0
    quote = opening.group(1)
    rest = first[opening.end() :]
    if quote in rest:
        return start + 1
    if len(quote) == 1:
        return 0  # a one-line string that does not close is not a docstring
    for number in range(start + 1, min(len(lines), start + MAX_DOCSTRING_LINES)):
        if quote in lines[number]:
            return number + 1
    return 0
