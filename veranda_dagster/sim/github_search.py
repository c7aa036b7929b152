"""``GET /search/code`` for the GitHub fake: the legacy code-search query language, on git grep.

Qualifiers understood: ``repo:o/r``, ``org:o``/``user:o``, ``language:x``, ``path:p``,
``extension:e``, ``filename:f``; every other word (or ``"quoted phrase"``) is a term, and a
file matches when it contains all of them (AND, case-insensitive). As on GitHub: only the
default branch is searched, a query with no term or naming an unknown repository is a 422,
and ``text_matches`` (with ``Accept: application/vnd.github.text-match+json``) carry the
matching line as the fragment with the term's indices in it.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from typing import Any

from veranda_dagster.sim.bare_repo import BareRepo

MAX_QUERY_CHARS = 256
MAX_RESULTS = 1000

LANGUAGE_EXTENSIONS = {
    "python": (".py",),
    "go": (".go",),
    "javascript": (".js", ".jsx", ".mjs"),
    "typescript": (".ts", ".tsx"),
    "markdown": (".md",),
    "yaml": (".yml", ".yaml"),
    "makefile": ("Makefile",),
}


def _invalid(message: str) -> tuple[int, dict[str, Any]]:
    error = {"message": message, "resource": "Search", "field": "q", "code": "invalid"}
    return 422, {
        "message": "Validation Failed",
        "errors": [error],
        "documentation_url": "https://docs.github.com/rest/search/search#search-code",
    }


def parse_query(q: str) -> tuple[list[str], dict[str, list[str]]]:
    try:
        words = shlex.split(q)
    except ValueError:
        words = q.split()
    terms: list[str] = []
    quals: dict[str, list[str]] = {}
    for word in words:
        key, sep, value = word.partition(":")
        if sep and key.lower() in (
            "repo",
            "org",
            "user",
            "language",
            "path",
            "extension",
            "filename",
            "in",
        ):
            quals.setdefault(key.lower(), []).append(value)
        elif word.upper() not in ("AND",):
            terms.append(word)
    return terms, quals


def _path_ok(path: str, quals: dict[str, list[str]]) -> bool:
    name = path.rsplit("/", 1)[-1]
    for lang in quals.get("language", []):
        exts = LANGUAGE_EXTENSIONS.get(lang.lower(), (f".{lang.lower()}",))
        if not any(name.endswith(e) or name == e for e in exts):
            return False
    for ext in quals.get("extension", []):
        if not name.endswith(f".{ext.lstrip('.')}"):
            return False
    for fname in quals.get("filename", []):
        if not fnmatch.fnmatch(name, fname):
            return False
    for prefix in quals.get("path", []):
        p = prefix.strip("/")
        if not (path.startswith(p + "/") or path == p or fnmatch.fnmatch(path, p)):
            return False
    return True


def search_code(
    repos: dict[str, BareRepo], q: str, text_match: bool, html_base: str
) -> tuple[int, dict[str, Any]]:
    if len(q) > MAX_QUERY_CHARS:
        return _invalid(f"The search query is longer than {MAX_QUERY_CHARS} characters.")
    terms, quals = parse_query(q)
    if not terms:
        return _invalid("The search is longer than 0 characters but contains no search term.")
    if any(t.startswith("/") and t.endswith("/") and len(t) > 1 for t in terms):
        return 200, {"total_count": 0, "incomplete_results": False, "items": []}
    scope = list(repos.values())
    if "repo" in quals:
        unknown = [r for r in quals["repo"] if r not in repos]
        if unknown:
            return _invalid(
                "The listed users and repositories cannot be searched either because the "
                "resources do not exist or you do not have permission to view them."
            )
        scope = [repos[r] for r in quals["repo"]]
    owners = quals.get("org", []) + quals.get("user", [])
    if owners:
        scope = [r for r in scope if r.full_name.split("/")[0] in owners]
    items: list[dict[str, Any]] = []
    for repo in scope:
        ref = repo.default_branch()
        sha = repo.resolve(ref) or ref
        for path, hits in repo.grep(terms).items():
            if not _path_ok(path, quals):
                continue
            entry = repo.entry(sha, path)
            item: dict[str, Any] = {
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "sha": entry[1] if entry else "",
                "url": f"{html_base}/repos/{repo.full_name}/contents/{path}?ref={sha}",
                "html_url": f"{html_base}/{repo.full_name}/blob/{sha}/{path}",
                "repository": {"full_name": repo.full_name, "name": repo.full_name.split("/")[1]},
                "score": 1.0,
            }
            if text_match:
                item["text_matches"] = [_text_match(h.text, terms) for h in hits[:10]]
            items.append(item)
    items = items[:MAX_RESULTS]
    return 200, {"total_count": len(items), "incomplete_results": False, "items": items}


def _text_match(fragment: str, terms: list[str]) -> dict[str, Any]:
    matches = []
    for term in terms:
        for m in re.finditer(re.escape(term), fragment, re.I):
            matches.append({"text": fragment[m.start() : m.end()], "indices": [m.start(), m.end()]})
    return {
        "object_type": "FileContent",
        "property": "content",
        "fragment": fragment,
        "matches": sorted(matches, key=lambda m: m["indices"][0]),
    }
