"""Nothing in the domain names a tracker or a forge: providers live outside it (issue 17).

Each provider's knowledge (key grammars, limits, token shapes, URL grammars, clients) sits in
its plugin folder (``sources/``, ``forges/``, ``vendors/``) and reaches the domain through a
port or a registration, so a new provider is a new folder, never an edit here.
"""

from __future__ import annotations

import re
from pathlib import Path

import veranda_dagster.domain as domain

VENDOR = re.compile(r"(?i)(?<![a-z])(github|gitlab|linear|jira|slack|atlassian)(?![a-z])")

ALLOWED = {
    ("path_kinds.py", r"(\.github|\.gitlab|\.circleci)"): (
        "directories a repository itself holds (its CI configuration), ranked as data files: "
        "a fact about the code being read, not a system the product talks to"
    ),
}


def test_the_domain_package_names_no_tracker_and_no_forge() -> None:
    root = Path(domain.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if VENDOR.search(line) and not any(
                path.name == name and part in line for name, part in ALLOWED
            ):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_every_allowed_line_still_exists_so_the_allow_list_cannot_rot() -> None:
    root = Path(domain.__file__).parent
    for name, part in ALLOWED:
        assert any(part in p.read_text() for p in root.rglob(name)), (name, part)
