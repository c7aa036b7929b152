"""A repository named in words by the end of its name and the kind of thing it is.

Organisations with many repositories name them ``<family>-<subject>-<kind>``
(``terraform-provider-prefect``, ``azure-functions-core-tools``, ``google-api-python-client``),
and people write the part after the family prefix as words of a sentence: "the Prefect
provider", "Core Tools", "the Python API client". The kind word is what makes such words a
name: without one ("Prefect Cloud") a spaced phrase is a sentence about the product and not the
repository (``repo_evidence._spaced_phrase``), and the subject words alone ("Prefect") name the
system the integration plugs into, not the integration.

The phrase counts only where its words are the **whole end** of exactly one repository's name
and that name has a family prefix in front of them: "aiohttp client" is not
``aiohttp-client-middlewares`` (its end is ``client-middlewares``), and a phrase that is the whole
name is already read as the name itself. A phrase inside a command line (``vault operator init
-key-shares=1``: a program, its subcommand, an option) is a command, not a name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

from veranda_dagster.domain.intake.catalog import Catalog

KIND_WORDS: Final = frozenset(
    {
        "adapter",
        "action",
        "cli",
        "client",
        "connector",
        "dialect",
        "driver",
        "exporter",
        "extension",
        "host",
        "instrumentation",
        "integration",
        "library",
        "operator",
        "plugin",
        "provider",
        "runner",
        "sdk",
        "tools",
    }
)
"""Words for the kind of software a repository of a family is: its name ends in one (the
subject before it). Not the systems an integration connects to (catalog, engine, table): those
name what the ticket runs on, whichever product it is filed in."""
MAX_SUBJECT_WORDS: Final = 2
"""Words before the kind word that may be the rest of the name's end ("Python API client");
one more is a sentence ("the latest Python API client": "latest" is tried and dropped)."""
_WORD = r"[A-Za-z][\w.]*"
_PHRASE: Final = re.compile(
    rf"(?<![\w.-])({_WORD}(?:[ \t]+{_WORD}){{0,{MAX_SUBJECT_WORDS - 1}}})[ \t]+"
    rf"({'|'.join(sorted(KIND_WORDS))})s?\b",
    re.I,
)
_COMMAND_TAIL: Final = re.compile(r"(?:[ \t]{1,4}[\w.:/=-]{1,64}){0,3}[ \t]{1,4}--?[A-Za-z]")
"""What follows a phrase that is a command line: up to three words, then an option (runs of
blanks and words bounded: a megabyte of spaces after a phrase is not a command line)."""

Adder = Callable[[str, int, int], None]
"""``(repo, start, end)``: the repository the phrase at ``text[start:end]`` names."""


def _parts(name: str) -> list[str]:
    return [p for p in re.split(r"[-_.]", name.lower()) if p]


def name_ends(catalog: Catalog) -> dict[tuple[str, ...], list[str]]:
    """Each end of a repository name a phrase may write (the kind word and up to
    ``MAX_SUBJECT_WORDS`` before it, in any order: sorted), when a family prefix is left in
    front of it -> the repositories whose names end so."""
    ends: dict[tuple[str, ...], list[str]] = {}
    for repo in catalog.repositories:
        parts = _parts(repo.name)
        for n in range(2, min(MAX_SUBJECT_WORDS + 1, len(parts) - 1) + 1):
            ends.setdefault(tuple(sorted(parts[-n:])), []).append(repo.full_name)
    return ends


def gather_kind_names(
    text: str, catalog: Catalog, used: Sequence[tuple[int, int]], add: Adder
) -> None:
    """Every phrase in ``text`` that names one repository by its name's end and kind word.
    ``used``: spans already read as a use (a command, an import): no phrase starts in one."""
    ends = name_ends(catalog)
    taken = bytearray(len(text) + 1)  # one pass over the spans: no span list per phrase
    for a, b in used:
        taken[a:b] = b"\x01" * (min(b, len(text)) - a)
    for m in _PHRASE.finditer(text):
        if taken[m.start()] or _COMMAND_TAIL.match(text, m.end()):
            continue
        words = [w.lower().strip(".") for w in m.group(1).split()]
        kind = m.group(2).lower()
        for subject in (words[-n:] for n in range(1, len(words) + 1)):
            repos = ends.get(tuple(sorted([*subject, kind])), [])
            if len(repos) == 1:
                add(repos[0], m.start(), m.end())
                break
