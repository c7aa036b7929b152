"""Every repository path a page in ``docs/`` names in backticks exists, so a moved module or
test cannot leave a page pointing at nothing (issue 31 left ``clients/forges.py`` and friends
named long after the plugin move).

Checked: backticked paths rooted at ``veranda_dagster/``, ``tests/``, ``benchmarks/``,
``docs/`` or ``deploy/`` (a ``::test`` suffix is allowed). Not checked: short package-relative
paths (``assets/_policy.py``), which the change traces in ``extending.md`` use for what main
had *before*, and ``tests/artifacts/``, written by test runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATH = re.compile(r"`((?:veranda_dagster|tests|benchmarks|docs|deploy)/[^`\s<>*{}]*)(?:::[^`]*)?`")
GENERATED = ("tests/artifacts/",)


def stale_paths(root: Path) -> list[str]:
    """``page:line: path`` for each backticked repository path that names nothing."""
    stale = []
    for page in sorted((root / "docs").rglob("*.md")):
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for match in PATH.finditer(line):
                path = match.group(1).split("::")[0].rstrip(".,:;")
                if path.startswith(GENERATED) or (root / path).exists():
                    continue
                stale.append(f"{page.relative_to(root)}:{number}: {path}")
    return stale


def test_every_backticked_path_in_docs_exists() -> None:
    assert stale_paths(ROOT) == []


def test_a_moved_module_is_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_here.py").write_text("")
    (tmp_path / "docs" / "page.md").write_text(
        "See `tests/test_here.py::test_x` and `veranda_dagster/clients/forges.py`.\n"
    )
    assert stale_paths(tmp_path) == ["docs/page.md:1: veranda_dagster/clients/forges.py"]
