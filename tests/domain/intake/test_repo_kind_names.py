"""A repository written as its name's end and a kind word (``repo_kind_names``): how many words
before the kind word may be the rest of the name's end (``MAX_SUBJECT_WORDS``)."""

from __future__ import annotations

from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo
from veranda_dagster.domain.intake.repo_kind_names import (
    MAX_SUBJECT_WORDS,
    gather_kind_names,
)

SUBJECT = ["python", "api", "data", "store"]
"""Name words before the kind word, more than the bound allows."""


def _named(text: str, names: list[str]) -> list[str]:
    catalog = Catalog(org="acme", repositories=[CatalogRepo(full_name=f"acme/{n}") for n in names])
    found: list[str] = []
    gather_kind_names(text, catalog, [], lambda repo, _start, _end: found.append(repo))
    return found


def test_a_name_end_of_the_bound_of_words_before_its_kind_word_is_read() -> None:
    """Beside a repository sharing all but the first of the bound's words before ``client``,
    only all of them tell the two apart: the phrase names exactly one."""
    words = SUBJECT[-MAX_SUBJECT_WORDS:]
    names = [
        "-".join(["acme", "x", *words, "client"]),
        "-".join(["acme", "y", *words[1:], "client"]),
    ]
    assert _named(f"The {' '.join(words)} client drops retries.", names) == [f"acme/{names[0]}"]


def test_a_name_end_needing_one_word_more_than_the_bound_is_not_read() -> None:
    """Two repositories whose ends differ only one word past the bound (``python`` vs ``go``
    before the same words and kind): the phrase cannot tell them apart within the bound, so
    it names neither (a guess would be one of two)."""
    words = SUBJECT[-MAX_SUBJECT_WORDS:]
    names = ["-".join(["acme", lead, *words, "client"]) for lead in ("python", "go")]
    text = f"The python {' '.join(words)} client drops retries."
    assert _named(text, names) == []
