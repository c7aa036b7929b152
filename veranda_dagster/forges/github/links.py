"""GitHub's URL grammar, read for repository detection: which repository a link in a ticket
points at, and whether it points at code, a reference or a comment (the domain, ``repo_evidence``,
weighs the evidence; the plugin declares this reader as its ``link_reader``)."""

from __future__ import annotations

from urllib.parse import urlsplit

from veranda_dagster.domain.intake.repo_evidence import RepoLink

GITHUB_HOSTS = frozenset({"github.com", "www.github.com"})
GITHUB_CODE_KINDS = frozenset({"", "blob", "tree", "commit", "commits", "compare", "raw", "blame"})
GITHUB_NOT_OWNERS = frozenset(
    {"orgs", "settings", "apps", "marketplace", "features", "topics", "search"}
)
GITHUB_COMMENT_ANCHORS = (
    "issuecomment",
    "discussion_r",
    "pullrequestreview",
    "discussioncomment",
)


def github_link(url: str) -> RepoLink | None:
    """``github.com/<owner>/<name>[/blob|tree|pull|issues/...]`` and raw file links."""
    parts = urlsplit(url)
    host = parts.netloc.lower()
    segments = [s for s in parts.path.split("/") if s]
    if host == "raw.githubusercontent.com":
        segments = [*segments[:2], "raw"]
    elif host not in GITHUB_HOSTS:
        return None
    if len(segments) < 2 or segments[0].lower() in GITHUB_NOT_OWNERS:
        return None
    owner, name = segments[0], segments[1].removesuffix(".git").rstrip(".")
    kind = "url_code" if (segments[2:3] or [""])[0] in GITHUB_CODE_KINDS else "url_ref"
    if parts.fragment.startswith(GITHUB_COMMENT_ANCHORS):
        kind = "url_comment"
    return RepoLink(owner, name, kind)
