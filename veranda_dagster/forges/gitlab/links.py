"""GitLab's URL grammar, read for repository detection: which project a link in a ticket points
at (subgroups included), and whether it points at code, a reference or a comment."""

from __future__ import annotations

from urllib.parse import urlsplit

from veranda_dagster.domain.intake.repo_evidence import RepoLink

GITLAB_HOSTS = frozenset({"gitlab.com", "www.gitlab.com"})
GITLAB_CODE_KINDS = frozenset({"", "blob", "tree", "commit", "commits", "compare", "raw", "blame"})
GITLAB_NOT_OWNERS = frozenset({"explore", "dashboard", "help", "users", "groups", "search", "-"})
GITLAB_COMMENT_ANCHORS = ("note_",)


def gitlab_link(url: str) -> RepoLink | None:
    """``gitlab.com/<group>[/<subgroup>...]/<name>[/-/blob|tree|merge_requests|issues/...]``:
    the project path runs up to GitLab's ``/-/`` separator, so subgroups stay in the owner.
    On another host (a self-managed instance) only a path with that separator is read: it is
    GitLab's own, so a link into any instance still points at its project."""
    parts = urlsplit(url)
    if parts.netloc.lower() not in GITLAB_HOSTS and "/-/" not in parts.path:
        return None
    path, _, rest = parts.path.strip("/").partition("/-/")
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2 or segments[0].lower() in GITLAB_NOT_OWNERS:
        return None
    owner, name = "/".join(segments[:-1]), segments[-1].removesuffix(".git").rstrip(".")
    what = rest.split("/", 1)[0] if rest else ""
    kind = "url_code" if what in GITLAB_CODE_KINDS else "url_ref"
    if parts.fragment.startswith(GITLAB_COMMENT_ANCHORS):
        kind = "url_comment"
    return RepoLink(owner, name, kind)
