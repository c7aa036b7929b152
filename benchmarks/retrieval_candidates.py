"""List a project's fix commits that name the issue they fix: the raw material of the dataset.

A curator runs this over a clone, newest first, and takes the first commits that pass the same
rule for every project (see ``benchmarks/README.md``, "The dataset"), then looks each issue up
in the project's GitHub issue threads and copies the report as filed into
``data/retrieval_reports/<owner>+<name>.json``. Nothing here reads the pack: the choice cannot
lean toward cases the pack happens to win.

A commit qualifies when its message says it fixes, closes or resolves an issue of the same
repository (``Fixes #123``, ``closes https://github.com/o/n/issues/123``) and its first-parent
diff changes between 1 and ``MAX_GOLD`` non-test ``.py`` files that already existed at the base,
with at most ``MAX_CHANGED_LINES`` changed lines in them. Run::

    python benchmarks/retrieval_candidates.py --repos-dir /work/bench_repos --repo yt-dlp/yt-dlp
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_retrieval_cases import _git, find_git_dir, is_code_file

MAX_GOLD = 4
"""Non-test files a fix may touch: past four it is a refactor, not a bug fix."""
MAX_CHANGED_LINES = 150
"""Changed lines in the gold files: bigger diffs are features or rewrites."""
SCAN_COMMITS = 6_000
"""Newest commits read per project: enough for dozens of candidates, bounded for ansible."""


def issue_pattern(repo: str) -> re.Pattern[str]:
    owner_name = re.escape(repo)
    return re.compile(
        rf"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\b[ :]*"
        rf"(?:https://github\.com/{owner_name}/issues/|{owner_name}#|#)(\d+)",
        re.IGNORECASE,
    )


PR_SUBJECT = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?fix\w*\b.*\(#(\d+)\)\s*$", re.IGNORECASE)
"""A squash-merged fix PR (``Fix flow run crash (#123)``): the issue is named in the PR thread."""


def candidates(
    git_dir: Path, repo: str, scan: int = SCAN_COMMITS, fix_prs: bool = False
) -> list[dict]:
    """Qualifying commits, newest first along the first-parent line.

    With ``fix_prs`` a commit whose message names no issue still qualifies when its subject is a
    squash-merged fix PR; the row carries ``pr`` and the curator follows the PR thread's
    ``Closes #N`` to the issue (projects such as Prefect keep the link only in the PR).
    """
    log = _git(
        git_dir, "log", "--first-parent", f"-{scan}", "--format=%x1e%H%x00%P%x00%cs%x00%s%x00%b"
    ).stdout
    pattern = issue_pattern(repo)
    out: list[dict] = []
    for record in filter(None, log.split("\x1e")):
        sha, parents, date, subject, body = [*record.split("\x00"), *[""] * 5][:5]
        numbers = list(dict.fromkeys(pattern.findall(f"{subject}\n{body}")))
        pr_match = PR_SUBJECT.match(subject) if fix_prs else None
        if not (numbers or pr_match) or not parents.strip():
            continue
        base = parents.split()[0]
        numstat = _git(git_dir, "diff", "--numstat", "--no-renames", base, sha).stdout
        gold, changed = [], 0
        for line in numstat.splitlines():
            added, removed, path = [*line.split("\t"), "", "", ""][:3]
            if not is_code_file(path) or not added.isdigit():
                continue
            exists = _git(git_dir, "cat-file", "-e", f"{base}:{path}", check=False)
            if exists.returncode == 0:
                gold.append(path)
                changed += int(added) + int(removed)
        if 1 <= len(gold) <= MAX_GOLD and changed <= MAX_CHANGED_LINES:
            row = {"sha": sha[:10], "date": date, "issues": [int(n) for n in numbers]}
            if pr_match and not numbers:
                row["pr"] = int(pr_match.group(1))
            out.append(row | {"subject": subject[:100], "gold": gold, "changed": changed})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos-dir", type=Path, required=True)
    parser.add_argument("--repo", required=True, help="owner/name")
    parser.add_argument("--scan", type=int, default=SCAN_COMMITS)
    parser.add_argument(
        "--fix-prs", action="store_true", help="also list squash-merged 'Fix ... (#PR)' commits"
    )
    args = parser.parse_args(argv)
    git_dir = find_git_dir(args.repos_dir, args.repo)
    for row in candidates(git_dir, args.repo, args.scan, args.fix_prs):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
