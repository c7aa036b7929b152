"""Citations scraped back out of a draft and resolved against the default branch.

The retrieval tool creates every ``[Rn]`` the agent may cite, so the citable set is closed by
construction. Whatever the draft cites anyway (an id not in the set, a ``path:line``, a
``path#L10-L20``, a forge's blob link) is scraped out and checked: the path must exist on the
default branch and the lines must be inside the file. Anything else is flagged and marked in
the text, so a confident wrong line number never ships as if it were checked.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from veranda_dagster.domain.clone.git_command import run_git
from veranda_dagster.domain.core.bounds import MAX_EXTRACT_TEXT_CHARS
from veranda_dagster.domain.core.models import Citation

UNRESOLVED_MARK = "⚠ unresolved: "

_ID = re.compile(r"\[(R\d+)\]")
_PATH_CHARS = r"[\w.@+-]"
_LINE_REF = re.compile(
    rf"(?<![\w/.:@+-])(?P<path>/?(?:{_PATH_CHARS}+/)*{_PATH_CHARS}*\w\.[A-Za-z][A-Za-z0-9]{{0,9}})"
    r"(?:#L(?P<h1>\d+)(?:-L?(?P<h2>\d+))?|:L?(?P<c1>\d+)(?:-L?(?P<c2>\d+))?)(?![\w])"
)
"""A path starts only where its run of path characters does (the guard holds every character
the path may contain), so no run is rescanned from each position inside it."""
_BLOB_URL = re.compile(
    r"https?://[^\s/]+/(?:[^\s/]+/){2,8}?blob/[^\s/]+/(?P<path>[^\s#?)\]>]+)"
    r"#L(?P<h1>\d+)(?:-L?(?P<h2>\d+))?"
)
"""A forge's blob link with a line anchor: ``<host>/<owner>/<name>/blob/<ref>/<path>#L1-L9``,
or with a group path and the ``/-/`` separator, ``<host>/<group>/<sub>/<name>/-/blob/<ref>/
<path>#L1-9``: owner segments are bounded, and none holds a ``/``, so no split is retried."""
_BLOB_URL_START = re.compile(r"https?://")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{0,31}://\S+")
"""The scheme is bounded (real ones are short), so a long dotted word is not rescanned."""
_HOST_SUFFIXES = frozenset(
    ["com", "org", "net", "io", "dev", "ai", "co", "cloud", "internal", "local", "svc"]
)
"""``example.com:443`` is a host and port, not a file and line."""


@dataclass(frozen=True)
class Reference:
    """One reference found in a draft; ``raw`` is its exact text (the key in a report)."""

    raw: str
    kind: str  # "id" | "path"
    span: tuple[int, int]
    id: str | None = None
    path: str | None = None
    start: int | None = None
    end: int | None = None


class CitationReport(BaseModel):
    resolved: list[str] = Field(default_factory=list)
    flagged: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)
    """Flagged reference -> why (unknown id, no such file, line past the end)."""


def _path_ref(m: re.Match[str], first: str, last: str | None) -> Reference:
    path = m.group("path").lstrip("/")
    return Reference(
        raw=m.group(0),
        kind="path",
        span=m.span(),
        path=path[2:] if path.startswith("./") else path,
        start=int(first),
        end=int(last or first),
    )


def _blob_links(text: str) -> list[re.Match[str]]:
    """Forge blob links with a line anchor. Each is matched only up to the next ``http(s)://``
    (a link never contains another), so chained links cannot make one attempt rescan the rest."""
    starts = [m.start() for m in _BLOB_URL_START.finditer(text)]
    ends = [*starts[1:], len(text)]
    found = (_BLOB_URL.match(text, start, end) for start, end in zip(starts, ends, strict=False))
    return [m for m in found if m]


def scrape_references(text: str) -> list[Reference]:
    """Every ``[Rn]`` and every ``path:line`` / ``path:L10-L20`` / ``path#L10`` / forge blob
    link with a line anchor in ``text``, in order of appearance. Only the first
    ``MAX_EXTRACT_TEXT_CHARS`` are read (the drafts scraped are bounded well below it)."""
    text = text[:MAX_EXTRACT_TEXT_CHARS]
    refs = [
        Reference(raw=m.group(0), kind="id", span=m.span(), id=m.group(1))
        for m in _ID.finditer(text)
    ]
    urls = [m.span() for m in _URL.finditer(text)]
    url_starts = [start for start, _ in urls]
    for m in _blob_links(text):
        refs.append(_path_ref(m, m.group("h1"), m.group("h2")))
    for m in _LINE_REF.finditer(text):
        inside = bisect.bisect_right(url_starts, m.start()) - 1
        if inside >= 0 and m.start() < urls[inside][1]:
            continue
        path = m.group("path")
        if "/" not in path and path.rsplit(".", 1)[-1].lower() in _HOST_SUFFIXES:
            continue
        first = m.group("h1") or m.group("c1")
        refs.append(_path_ref(m, first, m.group("h2") or m.group("c2")))
    return sorted(refs, key=lambda r: r.span)


def _check(
    ref: Reference, ids: dict[str, Citation], file_lines: Callable[[str], int | None]
) -> str | None:
    """Why ``ref`` does not resolve, or ``None`` when it does."""
    if ref.kind == "id":
        return None if ref.id in ids else f"{ref.id} is not in the retrieval pack"
    assert ref.path is not None and ref.start is not None and ref.end is not None
    total = file_lines(ref.path)
    if total is None:
        return f"{ref.path} does not exist on the default branch"
    if ref.start < 1 or ref.end < ref.start:
        return f"line range {ref.start}-{ref.end} is not a range"
    if ref.end > total:
        return f"{ref.path} has {total} lines; line {ref.end} is past the end"
    return None


def resolve(
    text: str, citations: list[Citation], file_lines: Callable[[str], int | None]
) -> CitationReport:
    """Resolve every reference in ``text``: ids against the pack, paths and lines against the
    default branch (``file_lines(path)`` = its line count there, or ``None`` if it is absent)."""
    ids = {c.id: c for c in citations}
    report = CitationReport()
    seen: set[str] = set()
    for ref in scrape_references(text):
        if ref.raw in seen:
            continue
        seen.add(ref.raw)
        reason = _check(ref, ids, file_lines)
        if reason is None:
            report.resolved.append(ref.raw)
        else:
            report.flagged.append(ref.raw)
            report.reasons[ref.raw] = reason
    return report


def annotate(text: str, report: CitationReport) -> str:
    """Mark every flagged reference in place (``⚠ unresolved: src/foo.py:999``). Idempotent:
    an already-marked reference is left alone."""
    flagged = set(report.flagged)
    out: list[str] = []
    cursor = 0
    for ref in scrape_references(text):
        start, end = ref.span
        if ref.raw not in flagged or start < cursor:
            continue
        if text[max(0, start - len(UNRESOLVED_MARK)) : start] == UNRESOLVED_MARK:
            continue
        out.append(text[cursor:start])
        out.append(UNRESOLVED_MARK + ref.raw)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def count_lines(data: bytes) -> int:
    """Lines as an editor numbers them: a final line without a newline still counts."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def git_file_lines(repo_dir: str | Path, rev: str) -> Callable[[str], int | None]:
    """``path -> line count at rev`` (``None`` if the path is not a file there), cached."""
    cache: dict[str, int | None] = {}

    def file_lines(path: str) -> int | None:
        if path not in cache:
            proc = run_git(repo_dir, ["cat-file", "blob", f"{rev}:{path}"], timeout=30, check=False)
            cache[path] = count_lines(proc.stdout) if proc.returncode == 0 else None
        return cache[path]

    return file_lines
