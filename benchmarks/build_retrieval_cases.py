"""Build ``benchmarks/data/retrieval_cases.json`` from the curated reports and git history.

Why two files: the report text (issue title and body as a user wrote them, found through the
GitHub issue threads of each project) is curated by hand into ``retrieval_reports.json``, one
entry per case with the short sha of the commit that fixed it. Everything else is derived here,
from the repositories' own history, so anyone with the same clones gets the same dataset:

- ``fix_sha``: the full sha of that commit;
- ``base_sha``: its first parent (the tree the reporter was looking at);
- ``gold_files``: the non-test ``.py`` files the fix changed that already existed at the base
  (a file the fix created cannot be retrieved from the base tree, so it is not counted);
- ``edit_lines``: per gold file, the base-side line ranges the fix edits (``git diff -U0``): a
  deleted or modified run of lines is its own range, a pure insertion is the line it follows
  (its anchor), so "a packed window overlaps a line the fix edits" can be checked on the base.

Reports come from ``retrieval_reports.json`` and from every ``retrieval_reports/*.json`` (one
file per project, same entry schema), so curators can add projects without touching one file.
A report may carry ``"split": "heldout"`` or ``"split": "heldout2"``: it is built like the others
but the benchmark reports it apart, and ranking changes are not tuned on it (``dev``, the default,
is what they are tuned on; ``heldout`` was opened for development once it had been looked at, and
``heldout2`` took its place as the set that is only measured; ``dev2`` is a second development
set of single-file fixes, built because the check sets miss that kind and ``dev`` hardly does).

A case whose gold set comes out empty is dropped and named on stderr. Bodies are trimmed to
``MAX_BODY_BYTES``. Run it as::

    python benchmarks/build_retrieval_cases.py --repos-dir /work/bench_repos
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPORTS = HERE / "data" / "retrieval_reports.json"
REPORTS_DIR = HERE / "data" / "retrieval_reports"
CASES = HERE / "data" / "retrieval_cases.json"

MAX_BODY_BYTES = 4_096
"""The report text kept per case: enough for the prose and a traceback, small enough to commit."""

_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|docs?|examples?|benchmarks?)/|(^|/)(test_[^/]*|[^/]*_test\.py|tests?\.py|conftest\.py)$"
)


DEV_SPLIT = "dev"
"""Reports the ranking may be developed against; the other splits are reported apart."""
SPLITS = (DEV_SPLIT, "heldout", "dev2", "heldout2", "heldout3")


class DatasetError(Exception):
    """A repository, commit or report the dataset needs is missing or malformed."""


def find_git_dir(repos_dir: Path, repo: str) -> Path:
    """The git directory for ``owner/name`` under ``repos_dir``, in any of the usual layouts."""
    owner, name = repo.split("/", 1)
    candidates = [
        repos_dir / f"{owner}+{name}" / "repo",
        repos_dir / f"{owner}+{name}",
        repos_dir / f"{owner}+{name}.git",
        repos_dir / owner / name,
        repos_dir / name,
        repos_dir / f"{name}.git",
    ]
    for path in candidates:
        if path.is_dir() and _git(path, "rev-parse", "--git-dir", check=False).returncode == 0:
            return path
    tried = ", ".join(str(p) for p in candidates)
    raise DatasetError(f"repository {repo} not found under {repos_dir} (tried {tried})")


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        raise DatasetError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip()}")
    return proc


def is_code_file(path: str) -> bool:
    """A non-test Python source file: what the gold set counts."""
    return path.endswith(".py") and not _TEST_PATH.search(path)


def trim_utf8(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore").rstrip() + "\n[…]"


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)


def edited_ranges(diff_text: str) -> list[list[int]]:
    """Base-side ``[start, end]`` ranges of a ``git diff -U0`` of one file: ``-a,b`` with ``b``
    lines removed or replaced is ``[a, a+b-1]``; ``-a,0`` (pure insertion after line ``a``) is
    the anchor ``[a, a]`` (line 1 for an insertion at the top)."""
    ranges: list[list[int]] = []
    for m in _HUNK.finditer(diff_text):
        start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        if count == 0:
            ranges.append([max(1, start), max(1, start)])
        else:
            ranges.append([start, start + count - 1])
    return ranges


def build_case(report: dict, git_dir: Path) -> dict | None:
    fix = _git(git_dir, "rev-parse", "--verify", f"{report['fix']}^{{commit}}").stdout.strip()
    base = _git(git_dir, "rev-parse", "--verify", f"{fix}^1").stdout.strip()
    changed = _git(git_dir, "diff", "--name-only", "--no-renames", base, fix).stdout.split()
    at_base = set(_git(git_dir, "ls-tree", "-r", "--name-only", base).stdout.splitlines())
    gold = sorted(p for p in changed if is_code_file(p) and p in at_base)
    if not gold:
        return None
    edits = {}
    for path in gold:
        diff = _git(git_dir, "diff", "-U0", "--no-renames", base, fix, "--", path).stdout
        edits[path] = edited_ranges(diff)
    owner_name = report["repo"]
    return {
        "id": f"{owner_name.split('/')[1]}-{report['issue']}",
        "repo": owner_name,
        "issue_number": report["issue"],
        "issue_url": report.get("issue_url")
        or f"https://github.com/{owner_name}/issues/{report['issue']}",
        "report_source": report.get("report_source", "issue"),
        "split": report.get("split", DEV_SPLIT),
        "title": report["title"],
        "body": trim_utf8(report["body"], MAX_BODY_BYTES),
        "fix_sha": fix,
        "base_sha": base,
        "gold_files": gold,
        "edit_lines": edits,
    }


def build(repos_dir: Path, reports: list[dict]) -> list[dict]:
    cases: list[dict] = []
    for report in reports:
        for key in ("repo", "issue", "fix", "title", "body"):
            if key not in report:
                raise DatasetError(f"report {report!r:.80} has no {key!r}")
        if report.get("split", DEV_SPLIT) not in SPLITS:
            raise DatasetError(f"report {report['repo']}#{report['issue']}: unknown split")
        case = build_case(report, find_git_dir(repos_dir, report["repo"]))
        if case is None:
            print(f"dropped {report['repo']}#{report['issue']}: no gold file", file=sys.stderr)
            continue
        cases.append(case)
    return cases


def load_reports(reports_file: Path, reports_dir: Path | None) -> list[dict]:
    """The curated reports: the main file, then every per-project file in sorted order; a report
    listed twice (same repo and issue) is kept once, the first time."""
    files = [reports_file]
    if reports_dir is not None and reports_dir.is_dir():
        files += sorted(reports_dir.glob("*.json"))
    out: list[dict] = []
    seen: set[tuple[str, int]] = set()
    for path in files:
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DatasetError(f"cannot read {path}: {exc}") from None
        if not isinstance(entries, list):
            raise DatasetError(f"{path} is not a JSON list of reports")
        for entry in entries:
            key = (str(entry.get("repo")), int(entry.get("issue") or 0))
            if key not in seen:
                seen.add(key)
                out.append(entry)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos-dir", type=Path, required=True, help="where the clones live")
    parser.add_argument("--reports", type=Path, default=REPORTS)
    parser.add_argument("--reports-dir", type=Path, default=REPORTS_DIR)
    parser.add_argument("--out", type=Path, default=CASES)
    args = parser.parse_args(argv)
    try:
        reports = load_reports(args.reports, args.reports_dir)
        cases = build(args.repos_dir, reports)
    except DatasetError as exc:
        print(f"build_retrieval_cases: error: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    repos = sorted({c["repo"] for c in cases})
    print(f"wrote {len(cases)} cases across {len(repos)} repositories to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
