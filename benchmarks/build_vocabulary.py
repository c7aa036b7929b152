"""Fill the benchmark catalogs' ``vocabulary`` with the catalog builder's own code, fed from git
snapshots of the repositories instead of a forge API (no forge is reachable from here).

``veranda catalog`` reads each repository's files through ``RepositoryFiles``; this script gives
``refresh_vocabulary`` the same seam over local bare snapshots (``<mirrors>/<owner>+<name>/repo``,
read with ``git show`` / ``git ls-tree`` on ``HEAD``), so the terms, bounds and merge are exactly
the product's. A repository without a snapshot keeps an empty vocabulary. ``--mirrors`` may be
given more than once: the first directory holding a repository's snapshot serves it (whole
fetched snapshots first, then sparse ones built from the stored index). Run::

    python benchmarks/build_vocabulary.py [--mirrors /work/.mirror ...] ORG [ORG ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veranda_dagster.domain.intake.catalog import RepoVocabulary, load_catalog  # noqa: E402
from veranda_dagster.domain.intake.catalog_builder import refresh_vocabulary  # noqa: E402

CATALOGS = ROOT / "benchmarks/data/repo_detection/catalogs"
GIT_TIMEOUT_S = 30
"""One ``git show`` / ``ls-tree`` on a local snapshot; far above what a manifest read takes."""


class SnapshotFiles:
    """``RepositoryFiles`` over local bare snapshots of the org's repositories."""

    def __init__(self, mirrors: list[Path]) -> None:
        self.mirrors = mirrors

    def _git_dir(self, full_name: str) -> Path | None:
        for mirrors in self.mirrors:
            base = mirrors / full_name.replace("/", "+", 1) / "repo"
            for candidate in (base, base / ".git"):
                if (candidate / "HEAD").is_file():
                    return candidate
        return None

    def _git(self, full_name: str, *args: str) -> str | None:
        git_dir = self._git_dir(full_name)
        if git_dir is None:
            return None
        proc = subprocess.run(
            ["git", f"--git-dir={git_dir}", *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
        return proc.stdout.decode("utf-8", errors="replace") if proc.returncode == 0 else None

    def read_repository_file(self, full_name: str, path: str) -> str | None:
        return self._git(full_name, "show", f"HEAD:{path.strip('/')}")

    def list_repository_dir(self, full_name: str, path: str) -> list[str] | None:
        spec = f"HEAD:{path.strip('/')}" if path.strip("/") else "HEAD^{tree}"
        out = self._git(full_name, "ls-tree", spec)
        if out is None:
            return None
        entries = []
        for line in out.splitlines():
            meta, _, name = line.partition("\t")
            entries.append(name + "/" if meta.split()[1:2] == ["tree"] else name)
        return entries


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mirrors",
        type=Path,
        action="append",
        help="snapshot directory (repeatable; the first holding a repository serves it); "
        "default /work/.mirror",
    )
    parser.add_argument("--catalogs", type=Path, default=CATALOGS, help="rewritten in place")
    parser.add_argument("orgs", nargs="+")
    args = parser.parse_args(argv)
    files = SnapshotFiles(args.mirrors or [Path("/work/.mirror")])
    for org in args.orgs:
        path = args.catalogs / f"{org}.json"
        catalog = load_catalog(path)
        blank = [
            r.model_copy(update={"vocabulary": RepoVocabulary()}) for r in catalog.repositories
        ]
        catalog = catalog.model_copy(update={"repositories": blank})  # read afresh, no stale terms
        notes: list[str] = []
        refreshed = refresh_vocabulary(catalog, files, notes)
        have = sum(1 for r in refreshed.repositories if files._git_dir(r.full_name))
        data = refreshed.model_dump(exclude_defaults=True)
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(f"{org}: {have} of {len(refreshed.repositories)} repositories had a snapshot")
        for note in notes:
            print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
