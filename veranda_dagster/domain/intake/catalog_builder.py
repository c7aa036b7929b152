"""Build the repo-detection catalog from the forge's listing and the hand-kept file.

The forge knows the repository list, descriptions, topics and languages, and which old names
redirect where (``GET /repos/{owner}/{old}`` answers with the renamed repository). Only people
know aliases and service names, so those come from the hand-kept file, whose entries also win
over the forge's description. A former name the file lists is kept only if the forge confirms it
still points at that repository (or when no lookup is available); at most
``MAX_RENAME_LOOKUPS`` names are checked per build, the rest are kept unconfirmed with a note.

Each repository's vocabulary (``repo_vocabulary``: its package, import and command names, hooks,
actions, public names, subcommands, documented configuration keys) is read again on every build
when the forge can serve files, for at most ``MAX_VOCABULARY_REPOS`` repositories; terms the
hand-kept file lists are kept beside them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from veranda_dagster.domain.core.bounds import (
    MAX_CONFIG_KEYS,
    MAX_DEFINITION_TERMS,
    MAX_RENAME_LOOKUPS,
    MAX_SHIPPED_TOOLS,
    MAX_SUBCOMMANDS,
    MAX_VOCABULARY_REPOS,
    MAX_VOCABULARY_TERMS,
    MAX_VOCABULARY_TERMS_PER_KIND,
)
from veranda_dagster.domain.intake.catalog import (
    VOCABULARY_KINDS,
    Catalog,
    CatalogRepo,
    RepoVocabulary,
)
from veranda_dagster.domain.intake.repo_vocabulary import RepositoryFiles, read_vocabulary

ResolveRepo = Callable[[str, str], dict[str, Any] | None]
"""``(owner, name) -> the repository the forge serves for it (after a rename), or None``."""


@runtime_checkable
class RepositoryListing(Protocol):
    """What building a catalog needs from a forge, in its terms: every repository of an org
    (subgroups included, where the forge has them) as ``full_name``, ``description``,
    ``topics``, ``language`` and ``archived``; and the repository a name points at now."""

    def list_org_repositories(self, org: str) -> list[dict[str, Any]]: ...

    def get_repository(self, owner: str, name: str) -> dict[str, Any] | None:
        """The repository served for ``owner/name`` (its new ``full_name`` after a rename),
        or ``None`` when no repository has or had that name."""
        ...


def build_catalog_from_forge(
    org: str,
    forge: RepositoryListing,
    hand_kept: Catalog | None = None,
    *,
    include_archived: bool = False,
    vocabulary: bool = True,
) -> tuple[Catalog, list[str]]:
    """``build_catalog`` over the forge's live listing, former names checked against it, and
    each repository's vocabulary read through it when it serves files (``vocabulary``)."""
    catalog, notes = build_catalog(
        org,
        forge.list_org_repositories(org),
        hand_kept,
        forge.get_repository,
        include_archived=include_archived,
    )
    if vocabulary and isinstance(forge, RepositoryFiles):
        catalog = refresh_vocabulary(catalog, forge, notes)
    elif vocabulary:
        notes.append("the forge client cannot read files; vocabulary left as it was")
    return catalog, notes


def merge_vocabulary(kept: RepoVocabulary, read: RepoVocabulary) -> RepoVocabulary:
    """The hand-kept terms first, then the ones read, each kind and the whole bounded."""
    merged: dict[str, list[str]] = {}
    room = MAX_VOCABULARY_TERMS
    for kind in VOCABULARY_KINDS:
        terms = list(dict.fromkeys([*getattr(kept, kind), *getattr(read, kind)]))
        merged[kind] = terms[: min(MAX_VOCABULARY_TERMS_PER_KIND, room)]
        room -= len(merged[kind])
    ships = list(dict.fromkeys([*kept.ships, *read.ships]))[:MAX_SHIPPED_TOOLS]
    definitions = list(dict.fromkeys([*kept.definitions, *read.definitions]))
    subcommands = list(dict.fromkeys([*kept.subcommands, *read.subcommands]))
    settings = list(dict.fromkeys([*kept.settings, *read.settings]))
    return RepoVocabulary(
        **merged,
        ships=ships,
        definitions=definitions[:MAX_DEFINITION_TERMS],
        subcommands=subcommands[:MAX_SUBCOMMANDS],
        settings=settings[:MAX_CONFIG_KEYS],
    )


def refresh_vocabulary(
    catalog: Catalog,
    files: RepositoryFiles,
    notes: list[str],
    hand_kept: Catalog | None = None,
) -> Catalog:
    """Each repository's vocabulary read again from its files (the first
    ``MAX_VOCABULARY_REPOS``; the rest keep theirs, with a note), merged with the terms
    ``hand_kept`` (or the catalog itself) lists for it."""
    kept = {r.full_name.lower(): r.vocabulary for r in (hand_kept or catalog).repositories}
    repos: list[CatalogRepo] = []
    for index, repo in enumerate(catalog.repositories):
        if index >= MAX_VOCABULARY_REPOS:
            if index == MAX_VOCABULARY_REPOS:
                notes.append(
                    f"read vocabulary for the first {MAX_VOCABULARY_REPOS} repositories only"
                )
            repos.append(repo)
            continue
        read, read_notes = read_vocabulary(repo.full_name, files)
        notes += read_notes
        hand = kept.get(repo.full_name.lower(), RepoVocabulary())
        repos.append(repo.model_copy(update={"vocabulary": merge_vocabulary(hand, read)}))
    return catalog.model_copy(update={"repositories": repos})


def _from_listing(item: dict[str, Any]) -> CatalogRepo:
    language = item.get("language")
    return CatalogRepo(
        full_name=str(item["full_name"]),
        description=str(item.get("description") or ""),
        topics=[str(t) for t in item.get("topics") or []],
        languages=[str(language)] if language else [],
    )


def _merge(live: CatalogRepo, kept: CatalogRepo | None) -> CatalogRepo:
    if kept is None:
        return live
    return kept.model_copy(
        update={
            "description": kept.description or live.description,
            "topics": list(dict.fromkeys([*kept.topics, *live.topics])),
            "languages": list(dict.fromkeys([*kept.languages, *live.languages])),
        }
    )


def _confirmed_former_names(
    repo: CatalogRepo, org: str, resolve: ResolveRepo | None, budget: list[int], notes: list[str]
) -> list[str]:
    kept = []
    for old in repo.former_names:
        owner, _, name = old.rpartition("/")
        owner = owner or org
        if resolve is None or budget[0] <= 0:
            if resolve is not None:
                notes.append(f"former name {old} of {repo.full_name} not checked (lookup bound)")
            kept.append(old)
            continue
        budget[0] -= 1
        served = resolve(owner, name)
        if served and str(served.get("full_name", "")).lower() == repo.full_name.lower():
            kept.append(old)
        else:
            target = (served or {}).get("full_name") or "nothing"
            notes.append(
                f"dropped former name {old} of {repo.full_name}: the forge serves {target}"
            )
    return kept


def build_catalog(
    org: str,
    listing: Iterable[dict[str, Any]],
    hand_kept: Catalog | None = None,
    resolve: ResolveRepo | None = None,
    *,
    include_archived: bool = False,
) -> tuple[Catalog, list[str]]:
    """The forge's listing merged with the hand-kept file; returns the catalog and build notes."""
    notes: list[str] = []
    kept = {r.full_name.lower(): r for r in (hand_kept.repositories if hand_kept else [])}
    repos: list[CatalogRepo] = []
    for item in listing:
        full = str(item.get("full_name") or "")
        if not full.lower().startswith(f"{org.lower()}/"):
            continue
        if item.get("archived") and not include_archived:
            notes.append(f"left out archived {full}")
            continue
        repos.append(_merge(_from_listing(item), kept.pop(full.lower(), None)))
    for missing in kept.values():
        notes.append(f"kept {missing.full_name} from the hand-kept file; the forge did not list it")
        repos.append(missing)
    budget = [MAX_RENAME_LOOKUPS]
    repos = [
        r.model_copy(
            update={"former_names": _confirmed_former_names(r, org, resolve, budget, notes)}
        )
        for r in repos
    ]
    return Catalog(org=org, repositories=repos), notes
