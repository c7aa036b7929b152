"""The web pages the fakes serve for the links they hand out, so every link offline opens
something a person can read.

A real forge or tracker answers its ``html_url`` (a pull request, an issue) with a page, not
the API's 401; the fakes do the same for the URLs they put in their answers: a pull or merge
request, a Linear issue, a Jira issue. Every text on the page (title, body, comments) came
from a client, so it is HTML-escaped and shown as preformatted text: a hostile PR body is
shown, never rendered. Pages are read-only and need no credential, like a public repository's.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass, field

from veranda_dagster.sim.http_fake import FakeResponse

MAX_PAGE_TEXT_CHARS = 20_000
"""Each text block on a page is cut here: a page is for reading, the API has the whole value."""
MAX_PAGE_COMMENTS = 100
"""Comments shown on one page, oldest first."""
HTML_TYPE = "text/html; charset=utf-8"


@dataclass(frozen=True)
class HumanPage:
    """What a person sees for one linked object."""

    kind: str
    """"Pull request", "Merge request", "Issue"."""
    title: str
    status: str
    body: str
    fake: str
    """Which fake serves it (a stand-in, said on the page)."""
    comments: list[tuple[str, str]] = field(default_factory=list)
    """(author, text), oldest first."""
    facts: list[tuple[str, str]] = field(default_factory=list)
    """Extra labelled lines (branch, repository)."""


def _cut(text: str) -> str:
    text = str(text)
    return text if len(text) <= MAX_PAGE_TEXT_CHARS else text[:MAX_PAGE_TEXT_CHARS] + "\n… (cut)"


def _pre(text: str) -> str:
    return f"<pre>{html.escape(_cut(text) or '(empty)')}</pre>"


def render(page: HumanPage) -> str:
    """The page as a small standalone HTML document (no script, no remote asset)."""
    e = html.escape
    facts = "".join(f"<li><b>{e(k)}</b>: {e(_cut(v))}</li>" for k, v in page.facts)
    comments: Iterable[tuple[str, str]] = page.comments[:MAX_PAGE_COMMENTS]
    shown = "".join(f"<li><b>{e(who)}</b>{_pre(text)}</li>" for who, text in comments)
    title = e(_cut(page.title))
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{title} · {e(page.kind)}</title></head><body>"
        f"<p><small>{e(page.fake)} (a loopback stand-in of veranda dev)</small></p>"
        f"<h1>{title}</h1><p>{e(page.kind)} · status: <b>{e(page.status)}</b></p>"
        f"<ul>{facts}</ul><h2>Description</h2>{_pre(page.body)}"
        f"<h2>Comments ({len(page.comments)})</h2><ol>{shown or '<li>none yet</li>'}</ol>"
        "</body></html>"
    )


def page_response(page: HumanPage) -> FakeResponse:
    return FakeResponse(200, render(page), content_type=HTML_TYPE)
