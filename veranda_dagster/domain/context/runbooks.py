"""Org runbooks from an architecture repository, narrowed to the ones a ticket touches.

A runbook is a markdown file: optional YAML front-matter (``title``, ``keywords``/``tags``,
``repos``/``applies_to``, ``always``) and headings. Runbooks are the how-we-do-things-here a
model cannot read off the source, but every one included costs attention, so only those whose
keywords, title or headings overlap the ticket's words and seeds are kept, at most
``MAX_RUNBOOKS``. A runbook scoped to other repositories never applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from veranda_dagster.domain.context.seeds import STOPWORDS
from veranda_dagster.domain.core.bounds import MAX_RUNBOOK_BYTES, MAX_RUNBOOKS
from veranda_dagster.domain.core.documents import yaml_or_none

MAX_RUNBOOK_FILES = 500
"""Markdown files read from the architecture repository; beyond that it is not a runbook dir."""

KEYWORD_WEIGHT = 3
TITLE_WEIGHT = 2
HEADING_WEIGHT = 1
MIN_SCORE = 2
"""One keyword or title word, or two heading words: less than that is coincidence."""
REPO_BONUS = 5

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass
class Runbook:
    source: str
    title: str
    body: str
    keywords: set[str] = field(default_factory=set)
    title_words: set[str] = field(default_factory=set)
    heading_words: set[str] = field(default_factory=set)
    repos: set[str] = field(default_factory=set)
    always: bool = False
    score: int = 0


def words(text: str) -> set[str]:
    """Lower-case words of 3+ letters, with camelCase and snake_case split into parts."""
    out: set[str] = set()
    for token in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        parts = [token, *re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", token), *token.split("_")]
        out |= {p.lower() for p in parts if len(p) >= 3}
    return {w for w in out if w not in STOPWORDS}


def _as_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def parse_runbook(source: str, text: str) -> Runbook:
    meta: dict[str, object] = {}
    body = text
    m = _FRONT.match(text)
    if m:
        loaded = yaml_or_none(m.group(1))
        meta = loaded if isinstance(loaded, dict) else {}
        body = text[m.end() :]
    headings = _HEADING.findall(body)
    title = str(meta.get("title") or (headings[0] if headings else Path(source).stem))
    keywords: set[str] = set()
    for kw in _as_list(meta.get("keywords")) + _as_list(meta.get("tags")):
        keywords |= words(kw)
    repos = {r.lower() for r in _as_list(meta.get("repos")) + _as_list(meta.get("applies_to"))}
    return Runbook(
        source=source,
        title=title,
        body=body.strip(),
        keywords=keywords,
        title_words=words(title),
        heading_words=words(" ".join(headings)),
        repos=repos,
        always=meta.get("always") is True,
    )


def load_runbooks(runbooks_dir: str | Path) -> list[Runbook]:
    root = Path(runbooks_dir)
    paths = sorted(p for p in root.rglob("*.md") if ".git" not in p.parts)[:MAX_RUNBOOK_FILES]
    return [
        parse_runbook(str(p.relative_to(root)), p.read_text(encoding="utf-8", errors="replace"))
        for p in paths
        if p.name.lower() != "readme.md"
    ]


def score(runbook: Runbook, terms: set[str], repo: str | None) -> int:
    value = (
        KEYWORD_WEIGHT * len(runbook.keywords & terms)
        + TITLE_WEIGHT * len(runbook.title_words & terms)
        + HEADING_WEIGHT * len((runbook.heading_words - runbook.title_words) & terms)
    )
    if repo and repo.lower() in runbook.repos:
        value += REPO_BONUS
    return value


def select_runbooks(
    runbooks_dir: str | Path | None, ticket_text: str, seeds: list[str], repo: str | None
) -> list[Runbook]:
    """The runbooks this ticket touches, best first, at most ``MAX_RUNBOOKS``."""
    if not runbooks_dir or not Path(runbooks_dir).is_dir():
        return []
    terms = words(ticket_text) | words(" ".join(seeds))
    chosen: list[Runbook] = []
    for rb in load_runbooks(runbooks_dir):
        if rb.repos and (not repo or repo.lower() not in rb.repos):
            continue
        rb.score = score(rb, terms, repo)
        if rb.always or rb.score >= MIN_SCORE:
            chosen.append(rb)
    chosen.sort(key=lambda rb: (not rb.always, -rb.score, rb.source))
    return chosen[:MAX_RUNBOOKS]


def render(runbooks: list[Runbook]) -> str:
    if not runbooks:
        return "No organisation runbook matches this ticket."
    parts = []
    for rb in runbooks:
        body = rb.body.encode("utf-8")
        text = rb.body
        if len(body) > MAX_RUNBOOK_BYTES:
            text = body[:MAX_RUNBOOK_BYTES].decode("utf-8", errors="ignore").rstrip()
            text += f"\n\n[… cut at {MAX_RUNBOOK_BYTES} bytes]"
        parts.append(f"### {rb.title}\n_From `{rb.source}`_\n\n{text}")
    return "\n\n".join(parts)
