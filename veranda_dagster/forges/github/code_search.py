"""GitHub code search as a ``CodeSearch`` index: ``GET /search/code`` scoped ``repo:org/name``.

GitHub's own index answers the seed; the text-match media type returns the matching fragments.
Code search is limited to 10 requests per rolling minute per token (``code_search`` resource),
separate from the 30/min of other searches. Every request is counted in a ``SearchBudget``
shared by all runs holding the token (``storage/search_budget.py``): a pack first ``plan``s how
many searches it may send now, and a request past the plan waits *before* it is sent rather
than spending it on a 403. The index covers the default branch only and returns no line
numbers, so each hit's file is read (the contents API at the default branch's sha, or the local
clone when ``contents`` is given) and the seed located in it.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any, Unpack
from urllib.parse import quote

from veranda_dagster.domain.context.code_search import Hit, LocalGitGrep, split_lines, window_in
from veranda_dagster.domain.core.bounds import (
    MAX_HITS_PER_FILE,
    MAX_HITS_PER_SEARCH,
)
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Window
from veranda_dagster.forges.github.limits import (
    GITHUB_CODE_SEARCH_PER_MINUTE,
    GITHUB_SEARCH_PER_PAGE,
    GITHUB_TEXT_MATCHES_READ,
)
from veranda_dagster.http.client import HttpSeams, HttpService, HttpStatusError
from veranda_dagster.storage.search_budget import PlannedSearches, SearchBudget, own_budget

TEXT_MATCH = "application/vnd.github.text-match+json"
API_VERSION = "2022-11-28"
MAX_QUERY_CHARS = 256
"""GitHub rejects longer ``q`` values with 422."""

Contents = Callable[[str], str | None]
"""``path -> file text at the pack's commit`` (``None`` when absent)."""


class GitHubCodeSearch(HttpService):
    service = "github"
    default_headers = {"X-GitHub-Api-Version": API_VERSION}

    def __init__(
        self,
        base_url: str,
        token: str | None,
        repo: str,
        *,
        contents: Contents | None = None,
        sha: str | None = None,
        per_minute: int = GITHUB_CODE_SEARCH_PER_MINUTE,
        budget: SearchBudget | None = None,
        **seams: Unpack[HttpSeams],
    ) -> None:
        """``budget`` is the token's shared budget; without one the client counts only its own
        requests (one process, e.g. a test or ``veranda pack``)."""
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise InputError(f"github code search: repo {repo!r} is not 'org/name'")
        super().__init__(base_url, token, **seams)
        self.repo = repo
        self.budget = budget or own_budget(
            base_url, token, per_minute, clock=self._clock, sleep=self._sleep
        )
        self._planned = PlannedSearches(self.budget)
        self._contents = contents
        self._sha = sha
        self._texts: dict[str, list[str] | None] = {}
        self._local: LocalGitGrep | None = None
        self.calls: list[str] = []

    def attach_clone(self, repo_dir: str | Path, sha: str) -> None:
        """Read file texts from a local clone at ``sha`` (the fetched default branch) instead of
        one contents-API call per hit file; citations then name that sha."""
        local = LocalGitGrep(repo_dir, sha)
        self._contents = lambda path: None if (t := local.file_text(path)) is None else "".join(t)
        self._sha = sha
        self._texts.clear()
        self._local = local

    def paths(self) -> list[str] | None:
        """The clone's file listing (to resolve traceback frames); ``None`` with no clone."""
        return self._local.paths() if self._local is not None else None

    def full_text_rank(self, query: str) -> list[tuple[str, float]] | None:
        """The full-text ranking over the attached clone (no API call); ``None`` with no clone:
        GitHub's index ranks no file by a whole ticket."""
        return self._local.full_text_rank(query) if self._local is not None else None

    def term_weights(self) -> dict[str, float]:
        return self._local.term_weights() if self._local is not None else {}

    @property
    def waited_s(self) -> float:
        """Seconds this client slept for the budget (planning and past-plan requests)."""
        return self._planned.waited_s

    def plan(self, want: int, need: int = 1) -> int:
        """Reserve up to ``want`` searches from the token's budget and return how many the
        caller may send without waiting; waits only while fewer than ``need`` are free."""
        return self._planned.plan(want, need)

    def finish(self) -> None:
        """Give the unspent part of the plan back to the other runs."""
        self._planned.finish()

    @property
    def sha(self) -> str:
        """The default branch's head commit: what the index covers and citations name."""
        if self._sha is None:
            info = self.json("GET", f"/repos/{self.repo}")
            branch = info.get("default_branch") if isinstance(info, dict) else None
            if not isinstance(branch, str):
                raise InputError(f"github: /repos/{self.repo} has no default_branch")
            response = self.request(
                "GET",
                f"/repos/{self.repo}/commits/{quote(branch, safe='')}",
                headers={"Accept": "application/vnd.github.sha"},
            )
            self._sha = response.text.strip()
        return self._sha

    def query(self, seed: str) -> str:
        term = f'"{seed}"' if any(ch.isspace() for ch in seed) and '"' not in seed else seed
        q = f"{term} repo:{self.repo}"
        if len(q) > MAX_QUERY_CHARS:
            raise InputError(
                f"github code search: query for {seed[:40]!r}… is over {MAX_QUERY_CHARS} chars"
            )
        return q

    def search(self, seed: str) -> list[Hit]:
        """One budgeted search; each item's lines located in the file's text."""
        self.calls.append(seed)
        q = self.query(seed)
        self._planned.spend()
        data = self.json(
            "GET",
            "/search/code",
            params={"q": q, "per_page": GITHUB_SEARCH_PER_PAGE},
            headers={"Accept": TEXT_MATCH},
        )
        items = data.get("items") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise InputError("github code search: response has no 'items' list")
        hits: list[Hit] = []
        for item in items[:GITHUB_SEARCH_PER_PAGE]:
            path = item.get("path") if isinstance(item, dict) else None
            matches = item.get("text_matches") if isinstance(item, dict) else None
            if isinstance(path, str):
                fragments = matches[:GITHUB_TEXT_MATCHES_READ] if isinstance(matches, list) else []
                hits += self._locate(path, seed, fragments)
            if len(hits) >= MAX_HITS_PER_SEARCH:
                return hits[:MAX_HITS_PER_SEARCH]
        return hits

    def _locate(self, path: str, seed: str, matches: list[dict[str, Any]]) -> list[Hit]:
        lines = self.file_text(path)
        if lines is None:
            return []
        needle = seed.lower()
        hits = [
            Hit(path, n, line.rstrip("\n"))
            for n, line in enumerate(lines, start=1)
            if needle in line.lower()
        ][:MAX_HITS_PER_FILE]
        if hits:
            return hits
        for match in matches:
            if not isinstance(match, dict):
                continue
            fragment = str(match.get("fragment") or "")
            if match.get("property") == "path":
                return [Hit(path, 1, "", "path")]
            first = next((f for f in fragment.splitlines() if f.strip()), "")
            for n, line in enumerate(lines, start=1):
                if first and first.strip() in line:
                    return [Hit(path, n, line.rstrip("\n"))]
        return [Hit(path, 1, "", "path")]

    def file_text(self, path: str) -> list[str] | None:
        if path not in self._texts:
            text = self._contents(path) if self._contents else self._fetch(path)
            self._texts[path] = None if text is None else split_lines(text)
        return self._texts[path]

    def _fetch(self, path: str) -> str | None:
        try:
            data = self.json(
                "GET",
                f"/repos/{self.repo}/contents/{quote(path)}",
                params={"ref": self.sha},
                headers={"Accept": "application/vnd.github+json"},
            )
        except HttpStatusError as exc:
            if exc.status == 404:
                return None
            raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if data.get("encoding") != "base64":
            return None
        return base64.b64decode(data.get("content") or "").decode("utf-8", errors="replace")

    def read_window(self, path: str, line: int) -> Window:
        missing = f"github: {path} is not a file at {self.sha[:12]}"
        return window_in(self.file_text(path), line, missing)
