"""GitLab blob search as a ``CodeSearch`` search index: ``GET /projects/:id/search?scope=blobs``.

Each result is a snippet, not a line: ``{"path", "filename", "data", "startline", "ref"}``
where ``data`` is a few lines starting at ``startline`` (docs.gitlab.com/api/search, "Scope:
blobs"). The hit line is where the seed occurs inside the snippet; a snippet that does not
contain it (fuzzy or path matches) is read back from the file. Search is rate limited per user
(30 requests a minute by default for authenticated search), counted in the token's shared
``SearchBudget`` and planned like GitHub's (``PlannedSearches``): a pack without a clone asks
``plan`` for what is free now and searches within it, never sleeping; only a request past a
plan waits *before* it is sent; a 429 that still comes waits ``Retry-After`` in
``HttpService``. With a clone the pack never uses this index (``search_choice``).
Search runs on the commit the pack cites (``ref=<sha>``), and file texts come from the
raw-file endpoint at that commit or from a local clone when one is attached.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Final, Unpack
from urllib.parse import quote

from veranda_dagster.domain.context.code_search import Hit, LocalGitGrep, split_lines, window_in
from veranda_dagster.domain.core.bounds import (
    FORGE_BLOB_SEARCH_PER_MINUTE,
    MAX_HITS_PER_FILE,
    MAX_HITS_PER_SEARCH,
)
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import Window
from veranda_dagster.forges.gitlab.base import API, GitLabApi, GitLabNotFoundError, project_ref
from veranda_dagster.http.client import HttpSeams
from veranda_dagster.storage.search_budget import PlannedSearches, SearchBudget, own_budget

SEARCH_PER_PAGE: Final = 20
"""Blob results asked for per search, and read: an answer with more is not what was asked
(each result without a snippet hit costs a raw-file request, so a hostile answer of a thousand
paths would otherwise cost a thousand)."""


class GitLabCodeSearch(GitLabApi):
    def __init__(
        self,
        base_url: str,
        token: str | None,
        project: str,
        *,
        sha: str | None = None,
        per_minute: int = FORGE_BLOB_SEARCH_PER_MINUTE,
        budget: SearchBudget | None = None,
        **seams: Unpack[HttpSeams],
    ) -> None:
        """``budget`` is the token's shared budget (every run holding the token draws from
        it); without one the client counts only its own searches, on the given ``clock`` or
        else a monotonic one."""
        super().__init__(base_url, token, **seams)
        self.project = project
        self._ref = project_ref(project)
        # The same rolling-window budget as GitHub's search: the blob search limit is per
        # user, so every client holding the token spends one budget, planned the same way.
        self.budget = budget or own_budget(
            base_url,
            token,
            per_minute,
            clock=seams.get("clock", time.monotonic),
            sleep=self._sleep,
        )
        self._planned = PlannedSearches(self.budget)
        self._sha = sha
        self._local: LocalGitGrep | None = None
        self._texts: dict[str, list[str] | None] = {}
        self.calls: list[str] = []

    def attach_clone(self, repo_dir: str | Path, sha: str) -> None:
        """Read file texts from a local clone at ``sha`` instead of one raw-file call each."""
        self._local = LocalGitGrep(repo_dir, sha)
        self._sha = sha
        self._texts.clear()

    @property
    def waited_s(self) -> float:
        """Seconds this client slept for the budget (planning and past-plan requests)."""
        return self._planned.waited_s

    def plan(self, want: int, need: int = 1) -> int:
        """Reserve up to ``want`` searches from the token's budget and return how many the
        caller may send without waiting; waits only while fewer than ``need`` are free (a pack
        plans with ``need=0``: what is free now, never a sleep)."""
        return self._planned.plan(want, need)

    def finish(self) -> None:
        """Give the unspent part of the plan back to the other runs."""
        self._planned.finish()

    @property
    def sha(self) -> str:
        """The default branch's head commit: what is searched and what citations name."""
        if self._sha is None:
            project = self._object("GET", f"/projects/{self._ref}")
            branch = project.get("default_branch")
            if not isinstance(branch, str) or not branch:
                raise InputError(f"gitlab: project {self.project} has no default_branch")
            data = self._object(
                "GET", f"/projects/{self._ref}/repository/branches/{quote(branch, safe='')}"
            )
            sha = (data.get("commit") or {}).get("id")
            if not isinstance(sha, str) or not sha:
                raise InputError(f"gitlab: branch {branch} of {self.project} has no commit id")
            self._sha = sha
        return self._sha

    def search(self, seed: str) -> list[Hit]:
        self.calls.append(seed)
        self._planned.spend()
        results = self.json(
            "GET",
            f"{API}/projects/{self._ref}/search",
            params={
                "scope": "blobs",
                "search": seed,
                "ref": self.sha,
                "per_page": SEARCH_PER_PAGE,
            },
        )
        if not isinstance(results, list):
            raise InputError("gitlab blob search: response is not a JSON list")
        hits: list[Hit] = []
        for result in results[:SEARCH_PER_PAGE]:
            if isinstance(result, dict):
                hits += self._locate(result, seed)
            if len(hits) >= MAX_HITS_PER_SEARCH:
                break
        return _dedupe(hits)[:MAX_HITS_PER_SEARCH]

    def _locate(self, result: dict[str, Any], seed: str) -> list[Hit]:
        path = result.get("path") or result.get("filename")
        if not isinstance(path, str) or not path:
            return []
        needle = seed.lower()
        start = int(result.get("startline") or 1)
        snippet = str(result.get("data") or "").split("\n")
        hits = [
            Hit(path, start + i, line.rstrip("\r"))
            for i, line in enumerate(snippet)
            if needle in line.lower()
        ]
        if hits:
            return hits[:MAX_HITS_PER_FILE]
        lines = self.file_text(path) or []
        found = [
            Hit(path, n, line.rstrip("\n"))
            for n, line in enumerate(lines, start=1)
            if needle in line.lower()
        ]
        return found[:MAX_HITS_PER_FILE] or [Hit(path, 1, "", "path")]

    def file_text(self, path: str) -> list[str] | None:
        if path not in self._texts:
            if self._local is not None:
                self._texts[path] = self._local.file_text(path)
            else:
                text = self._raw(path)
                self._texts[path] = None if text is None else split_lines(text)
        return self._texts[path]

    def _raw(self, path: str) -> str | None:
        try:
            response = self.request(
                "GET",
                f"{API}/projects/{self._ref}/repository/files/{quote(path, safe='')}/raw",
                params={"ref": self.sha},
            )
        except GitLabNotFoundError:
            return None
        return response.content.decode("utf-8", errors="replace")

    def read_window(self, path: str, line: int) -> Window:
        missing = f"gitlab: {path} is not a file at {self.sha[:12]}"
        return window_in(self.file_text(path), line, missing)


def _dedupe(hits: list[Hit]) -> list[Hit]:
    seen: set[tuple[str, int]] = set()
    out: list[Hit] = []
    for hit in hits:
        if (hit.path, hit.line) not in seen:
            seen.add((hit.path, hit.line))
            out.append(hit)
    return out
