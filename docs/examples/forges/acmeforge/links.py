"""Acme Forge's URL grammar, read for repository detection: ``https://code.acme.test/<owner>/
<name>[/src|/changes/...]`` names a repository; the domain weighs the evidence."""

from __future__ import annotations

from urllib.parse import urlsplit

from veranda_dagster.domain.intake.repo_evidence import RepoLink

HOSTS = frozenset({"code.acme.test"})
CODE_KINDS = frozenset({"", "src", "raw", "commit", "blame"})


def acmeforge_link(url: str) -> RepoLink | None:
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if parts.netloc.lower() not in HOSTS or len(segments) < 2:
        return None
    owner, name = segments[0], segments[1].removesuffix(".git")
    kind = "url_code" if (segments[2:3] or [""])[0] in CODE_KINDS else "url_ref"
    return RepoLink(owner, name, "url_comment" if parts.fragment.startswith("c-") else kind)
