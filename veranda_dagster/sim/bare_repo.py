"""Read-only views of a real bare git repository, for the GitHub fake.

The fake forge keeps no copy of repository state: branches, contents, trees, diffs and code
search are answered from the bare repository on disk (``<root>/<org>/<name>.git``), which the
product clones from and pushes to with plain file paths. So a push is visible to the next API
call with no synchronisation, exactly as on the real forge.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_S = 30.0
"""A git read on a small local bare repo; slower means something is wedged."""


class GitReadError(Exception):
    pass


@dataclass(frozen=True)
class GrepHit:
    path: str
    line: int
    text: str


class BareRepo:
    def __init__(self, path: Path, full_name: str) -> None:
        self.path = path
        self.full_name = full_name

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["git", f"--git-dir={self.path}", *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
        if check and proc.returncode != 0:
            raise GitReadError(proc.stderr.strip() or f"git {args[0]} failed")
        return proc.stdout

    def default_branch(self) -> str:
        out = self.git("symbolic-ref", "--short", "HEAD", check=False).strip()
        return out or "main"

    def resolve(self, ref: str) -> str | None:
        """A sha for a branch name, ``refs/...`` or sha prefix; None when unknown."""
        for candidate in (f"refs/heads/{ref}", ref):
            out = self.git(
                "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}", check=False
            )
            if out.strip():
                return out.strip()
        return None

    def branches(self) -> dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
        pairs = (line.split(" ", 1) for line in out.splitlines() if " " in line)
        return {name: sha for name, sha in pairs}

    def entry(self, ref: str, path: str) -> tuple[str, str] | None:
        """(type, sha) of ``path`` at ``ref``: type ``blob`` or ``tree``; None if absent."""
        if not path:
            sha = self.git("rev-parse", f"{ref}^{{tree}}", check=False).strip()
            return ("tree", sha) if sha else None
        out = self.git("ls-tree", ref, "--", path.rstrip("/"), check=False).strip()
        if not out:
            return None
        meta, _ = out.split("\t", 1)
        _, kind, sha = meta.split()
        return kind, sha

    def list_dir(self, ref: str, path: str) -> list[tuple[str, str, str, int]]:
        """(name, type, sha, size) of each entry of a directory."""
        spec = f"{ref}:{path.strip('/')}" if path.strip("/") else f"{ref}^{{tree}}"
        out = self.git("ls-tree", "-l", spec)
        rows = []
        for line in out.splitlines():
            meta, name = line.split("\t", 1)
            _, kind, sha, size = meta.split()
            rows.append((name, kind, sha, int(size) if size.isdigit() else 0))
        return rows

    def tree(self, ref: str, recursive: bool) -> list[dict[str, object]]:
        args = ["ls-tree", "-l", "-t"] + (["-r"] if recursive else []) + [ref]
        rows: list[dict[str, object]] = []
        for line in self.git(*args).splitlines():
            meta, name = line.split("\t", 1)
            mode, kind, sha, size = meta.split()
            row: dict[str, object] = {"path": name, "mode": mode, "type": kind, "sha": sha}
            if kind == "blob":
                row["size"] = int(size)
            rows.append(row)
        return rows

    def blob(self, sha: str) -> bytes:
        proc = subprocess.run(
            ["git", f"--git-dir={self.path}", "cat-file", "blob", sha],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
        if proc.returncode != 0:
            raise GitReadError(proc.stderr.decode(errors="replace").strip())
        return proc.stdout

    def grep(self, terms: list[str], path_filter: str | None = None) -> dict[str, list[GrepHit]]:
        """Files on the default branch containing every term (case-insensitive, fixed strings),
        with the matching lines: GitHub code search indexes the default branch only."""
        ref = self.default_branch()
        per_term: list[dict[str, list[GrepHit]]] = []
        for term in terms:
            args = ["grep", "-n", "-I", "-i", "-F", "--full-name", "-e", term, ref]
            if path_filter:
                args += ["--", path_filter]
            out = self.git(*args, check=False)
            hits: dict[str, list[GrepHit]] = {}
            for line in out.splitlines():
                _, rest = line.split(":", 1)  # "<ref>:<path>:<n>:<text>"
                path, number, text = rest.split(":", 2)
                hits.setdefault(path, []).append(GrepHit(path, int(number), text))
            per_term.append(hits)
        if not per_term:
            return {}
        common = set(per_term[0]).intersection(*per_term[1:])
        return {
            p: sorted({h for t in per_term for h in t.get(p, [])}, key=lambda h: h.line)
            for p in sorted(common)
        }

    def diff_files(self, base: str, head: str) -> list[dict[str, object]]:
        """``pulls/{n}/files`` rows from ``git diff base...head``."""
        numstat = self.git("diff", "--numstat", f"{base}...{head}")
        status = dict(
            (parts[1], parts[0][0])
            for parts in (
                line.split("\t", 1)
                for line in self.git("diff", "--name-status", f"{base}...{head}").splitlines()
            )
            if len(parts) == 2
        )
        names = {"A": "added", "D": "removed", "M": "modified", "R": "renamed"}
        rows: list[dict[str, object]] = []
        for line in numstat.splitlines():
            added, deleted, path = line.split("\t", 2)
            patch = self.git("diff", f"{base}...{head}", "--", path)
            hunk = patch.split("\n@@", 1)
            rows.append(
                {
                    "filename": path,
                    "status": names.get(status.get(path, "M"), "modified"),
                    "additions": int(added) if added.isdigit() else 0,
                    "deletions": int(deleted) if deleted.isdigit() else 0,
                    "changes": (int(added) if added.isdigit() else 0)
                    + (int(deleted) if deleted.isdigit() else 0),
                    "patch": "@@" + hunk[1] if len(hunk) == 2 else "",
                    "sha": hashlib.sha1(patch.encode()).hexdigest(),
                }
            )
        return rows


def repos_under(root: Path) -> dict[str, BareRepo]:
    """Every ``<org>/<name>.git`` under ``root``, keyed ``org/name``."""
    found: dict[str, BareRepo] = {}
    if not root.is_dir():
        return found
    for org in sorted(p for p in root.iterdir() if p.is_dir()):
        for repo in sorted(org.glob("*.git")):
            full = f"{org.name}/{repo.name.removesuffix('.git')}"
            found[full] = BareRepo(repo, full)
    return found
