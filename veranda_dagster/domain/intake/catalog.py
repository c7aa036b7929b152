"""The org's repository catalog: the closed set a ticket's repository is chosen from.

It comes from config (JSON or YAML) because the names people type ("payments", "the dashboard",
the ``mailman`` service) are aliases only the org knows. The forge fills what it can (the list,
descriptions, topics, languages, and which old names redirect where; see ``catalog_builder``);
the hand-kept file adds aliases and service names. Each repository's ``vocabulary`` is what a
colleague knows it by (its distribution and import names, commands, plugins, hooks, action and
image names, public top-level names, subcommands and documented configuration keys), read from
its files by ``veranda catalog``. A catalog with only ``full_name``, ``description`` and
``aliases`` (the first format) still loads unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from veranda_dagster.domain.core.bounds import (
    MAX_CATALOG_BYTES,
    MAX_CONFIG_KEYS,
    MAX_DEFINITION_TERMS,
    MAX_GROUP_DEPTH,
    MAX_SHIPPED_TOOLS,
    MAX_SUBCOMMANDS,
    MAX_VOCABULARY_TERMS,
    MAX_VOCABULARY_TERMS_PER_KIND,
)
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.input_files import load_document, validate_document
from veranda_dagster.domain.core.models import Strict

_FULL_NAME = re.compile(
    rf"^[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9_.-]+){{0,{MAX_GROUP_DEPTH}}}/[A-Za-z0-9_.-]+$"
)
"""``org/name``, or ``org/group/.../name`` on a forge with subgroups (at most
``MAX_GROUP_DEPTH`` groups between the org and the name)."""


_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
VOCABULARY_TERM = re.compile(r"^[A-Za-z0-9@][\w@./:+-]{0,99}$")
"""A vocabulary term: a package (``@sentry/node``), module, command, hook id, image or name."""

VOCABULARY_KINDS = (
    "distributions",
    "imports",
    "commands",
    "plugins",
    "hooks",
    "actions",
    "images",
    "charts",
    "symbols",
)


def _capped_names(values: list[str], cap: int, what: str) -> list[str]:
    """``values`` as names (``_names_only``), refused past ``cap``: a stored catalog is input
    too, and one field may not grow without bound."""
    if len(values) > cap:
        raise ValueError(f"more than {cap} {what}")
    return _names_only(values)


def _names_only(values: list[str]) -> list[str]:
    for value in values:
        if not VOCABULARY_TERM.match(value):
            raise ValueError(f"vocabulary term {value!r} is not a name")
    return values


class RepoVocabulary(Strict):
    """What a colleague knows a repository by, read from its own files (``repo_vocabulary``).

    Each list is bounded by ``MAX_VOCABULARY_TERMS_PER_KIND`` and the whole by
    ``MAX_VOCABULARY_TERMS``, so a hostile or huge repository cannot flood detection."""

    distributions: list[str] = Field(default_factory=list)
    """Published package names: ``httpx``, ``dogpile.cache``, ``@sentry/node``."""
    imports: list[str] = Field(default_factory=list)
    """Top-level import names or module paths: ``rest_framework``, ``go.opentelemetry.io/otel``."""
    commands: list[str] = Field(default_factory=list)
    """Console scripts and binaries: ``pre-commit``, ``sentry-cli``, ``alembic``."""
    plugins: list[str] = Field(default_factory=list)
    """Entry-point names it registers in another tool (a pytest plugin, a flake8 extension)."""
    hooks: list[str] = Field(default_factory=list)
    """Hook ids it defines (``.pre-commit-hooks.yaml``: ``trailing-whitespace``)."""
    actions: list[str] = Field(default_factory=list)
    """CI action refs it is (``owner/name`` as a workflow writes it after ``uses:``)."""
    images: list[str] = Field(default_factory=list)
    """Container images it publishes (``otel/opentelemetry-collector``)."""
    charts: list[str] = Field(default_factory=list)
    """Helm charts it publishes (``Chart.yaml``'s ``name:``: ``prefect-worker``)."""
    symbols: list[str] = Field(default_factory=list)
    """Public top-level names of its package (``AsyncClient``, ``make_region``): the most
    numerous kind, so last when ``MAX_VOCABULARY_TERMS`` runs out."""
    ships: list[str] = Field(default_factory=list)
    """Tools it ships, wraps or bundles (its runtime dependencies, what its Dockerfiles install,
    the PyPI projects its README links): never a name it is known by, so not among ``terms()``;
    detection reads it to doubt a title that names one of them (``auditwheel`` in manylinux's
    images). Bounded by ``MAX_SHIPPED_TOOLS``."""
    definitions: list[str] = Field(default_factory=list)
    """A second, larger index: the top-level public class and function names of its package's
    modules (``RegionInvalidationStrategy``, ``permission_classes``), read by
    ``repo_definitions``. Not a name it is known by (so not among ``terms()``): detection reads
    it only for a ticket that names no repository at all, and only for a name written as code
    that one repository defines. Bounded by ``MAX_DEFINITION_TERMS``."""

    subcommands: list[str] = Field(default_factory=list)
    """Subcommands its command line declares (``worker``, ``autoupdate``, ``devenv``), read by
    ``repo_subcommands``. A word on its own (``run``, ``export``), so not among ``terms()``:
    detection counts one only written after a command (``celery worker``, ``poetry export``:
    a plugin declares its host's subcommands too). Bounded by ``MAX_SUBCOMMANDS``."""
    settings: list[str] = Field(default_factory=list)
    """Configuration keys it documents (``worker_prefetch_multiplier``, ``allowlist_externals``,
    ``OTEL_EXPORTER_OTLP_ENDPOINT``), read by ``repo_config_keys``. Not among ``terms()``: a key
    is no name the repository is known by, and many are ordinary words (``timeout``);
    detection counts one only written as configuration and documented by one repository alone.
    Bounded by ``MAX_CONFIG_KEYS``."""

    @field_validator(*VOCABULARY_KINDS)
    @classmethod
    def _bounded_terms(cls, values: list[str]) -> list[str]:
        return _capped_names(values, MAX_VOCABULARY_TERMS_PER_KIND, "terms of one kind")

    @field_validator("ships")
    @classmethod
    def _bounded_ships(cls, values: list[str]) -> list[str]:
        return _capped_names(values, MAX_SHIPPED_TOOLS, "shipped tools")

    @field_validator("definitions")
    @classmethod
    def _bounded_definitions(cls, values: list[str]) -> list[str]:
        return _capped_names(values, MAX_DEFINITION_TERMS, "definitions")

    @field_validator("subcommands")
    @classmethod
    def _bounded_subcommands(cls, values: list[str]) -> list[str]:
        return _capped_names(values, MAX_SUBCOMMANDS, "subcommands")

    @field_validator("settings")
    @classmethod
    def _bounded_settings(cls, values: list[str]) -> list[str]:
        return _capped_names(values, MAX_CONFIG_KEYS, "configuration keys")

    def terms(self) -> list[tuple[str, str]]:
        """``(kind, term)`` for every term, kinds in declaration order."""
        return [(kind, term) for kind in VOCABULARY_KINDS for term in getattr(self, kind)]

    def is_empty(self) -> bool:
        extra = (self.ships, self.definitions, self.subcommands, self.settings)
        return not self.terms() and not any(extra)


class CatalogRepo(Strict):
    full_name: str
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    """Other names people type for it: a package or import name, a nickname."""
    service: list[str] = Field(default_factory=list)
    """Services built from it (``gatekeeper``): what ``service:<name>`` labels say."""
    former_names: list[str] = Field(default_factory=list)
    """Names it had before a rename or transfer (``old-name`` or ``owner/old-name``); the
    forge still redirects links that use them."""
    topics: list[str] = Field(default_factory=list)
    languages: list[str] = Field(default_factory=list)
    vocabulary: RepoVocabulary = Field(default_factory=RepoVocabulary)
    """Read from the repository by ``veranda catalog`` (refreshed on every build); a hand-kept
    file may also write it."""

    @field_validator("vocabulary")
    @classmethod
    def _bounded_vocabulary(cls, value: RepoVocabulary) -> RepoVocabulary:
        if len(value.terms()) > MAX_VOCABULARY_TERMS:
            raise ValueError(f"vocabulary has more than {MAX_VOCABULARY_TERMS} terms")
        return value

    @field_validator("full_name")
    @classmethod
    def _org_slash_name(cls, value: str) -> str:
        if not _FULL_NAME.match(value):
            raise ValueError(f"{value!r} is not 'org/name' or 'org/group/name'")
        return value

    @field_validator("former_names")
    @classmethod
    def _names(cls, values: list[str]) -> list[str]:
        for value in values:
            if not (_FULL_NAME.match(value) or _NAME.match(value)):
                raise ValueError(f"former name {value!r} is not 'name' or 'owner/name'")
        return values

    @property
    def name(self) -> str:
        """The last path segment: ``ledger`` of ``acme/payments/ledger``."""
        return self.full_name.rsplit("/", 1)[1]

    @property
    def namespace(self) -> str:
        """Everything before the name: ``acme`` or ``acme/payments``."""
        return self.full_name.rsplit("/", 1)[0]


class Catalog(Strict):
    org: str
    repositories: list[CatalogRepo]
    also_orgs: list[str] = Field(default_factory=list)
    """Further orgs this catalog answers for: where a ticket may go to the repositories of
    several orgs, detection runs once over their catalogs merged (``merge_catalogs``), so the
    lead a repository needs is measured against every org's candidates, not per org."""

    @property
    def orgs(self) -> list[str]:
        return [self.org, *self.also_orgs]

    @property
    def title(self) -> str:
        """How a question names the catalog: ``acme`` or ``acme, acme-data``."""
        return ", ".join(self.orgs)

    def is_org(self, owner: str) -> bool:
        """``owner`` is one of this catalog's orgs (not a group inside one)."""
        return owner.lower() in {org.lower() for org in self.orgs}

    def by_full_name(self, full_name: str) -> CatalogRepo | None:
        wanted = full_name.lower().removesuffix(".git")
        return next((r for r in self.repositories if r.full_name.lower() == wanted), None)

    def in_org(self, namespace: str) -> bool:
        """``acme`` and ``acme/payments`` are this org's (org ``acme``); ``other`` is not."""
        lowered = namespace.lower()
        return any(lowered == o or lowered.startswith(o + "/") for o in map(str.lower, self.orgs))

    def by_name(self, name: str) -> CatalogRepo | None:
        """A repository by its short name (``billing-api``) in this org: the first listed when
        two subgroups hold the same name (a full path names either one)."""
        wanted = name.lower().removesuffix(".git")
        return next((r for r in self.repositories if r.name.lower() == wanted), None)

    def by_alias(self, alias: str) -> list[CatalogRepo]:
        wanted = normalise(alias)
        return [r for r in self.repositories if wanted in {normalise(a) for a in r.aliases}]

    def by_service(self, service: str) -> list[CatalogRepo]:
        """Repositories that build the named service (or carry it as an alias)."""
        wanted = normalise(service)
        return [
            r
            for r in self.repositories
            if wanted in {normalise(a) for a in [*r.service, *r.aliases]}
        ]

    def by_former_name(self, owner: str, name: str) -> list[CatalogRepo]:
        """Repositories once called ``owner/name`` (or ``name`` inside this org)."""
        full = f"{owner}/{name}".lower().removesuffix(".git")
        short = name.lower().removesuffix(".git")
        in_org = self.in_org(owner)
        hits = []
        for repo in self.repositories:
            olds = {f.lower() for f in repo.former_names}
            if full in olds or (in_org and short in olds):
                hits.append(repo)
        return hits

    def resolve(self, value: str) -> list[CatalogRepo]:
        """``org/name``, ``org/group/name`` or ``group/name`` (a path inside the org), a short
        name, or an alias -> matching repositories (empty if none)."""
        value = value.strip().strip("`'\".,;:()[]").removesuffix(".git")
        if not value:
            return []
        if "/" in value:
            exact = self.by_full_name(value) or next(
                (r for org in self.orgs if (r := self.by_full_name(f"{org}/{value}"))), None
            )
            if exact:
                return [exact]
            owner, _, name = value.rpartition("/")
            hit = self.by_name(name) if self.is_org(owner) else None
            return [hit] if hit else self.by_former_name(owner, name)
        hit = self.by_name(value)
        if hit:
            return [hit]
        return self.by_alias(value) or self.by_service(value) or self._formerly_in_org(value)

    def _formerly_in_org(self, name: str) -> list[CatalogRepo]:
        """Repositories once called ``name`` inside any of the catalog's orgs, each once."""
        found = [r for org in self.orgs for r in self.by_former_name(org, name)]
        return list({r.full_name: r for r in found}.values())

    def names(self) -> list[str]:
        return [r.full_name for r in self.repositories]


def normalise(text: str) -> str:
    """``Billing_API``, ``billing api`` and ``billing-api`` are one name."""
    return re.sub(r"[\s_-]+", "-", text.strip().lower())


def parse_catalog(data: Any, source: str = "catalog") -> Catalog:
    catalog = validate_document(Catalog, data, source)
    for repo in catalog.repositories:
        if not catalog.in_org(repo.namespace):
            raise InputError(f"{source}: {repo.full_name!r} is not in org {catalog.org!r}")
    return catalog


def load_catalog(path: str | Path) -> Catalog:
    """Read a catalog from JSON or YAML (by extension; YAML also parses JSON)."""
    path = Path(path)
    data = load_document(path, what="catalog", max_bytes=MAX_CATALOG_BYTES)
    return parse_catalog(data, f"catalog {path}")


def refresh_catalog_from_forge(
    catalog: Catalog,
    list_org_repos: Callable[[str], Iterable[dict[str, Any]]],
    *,
    include_archived: bool = False,
) -> Catalog:
    """Merge the org's live repository list into the catalog.

    Configured aliases and descriptions win (people wrote them); repositories the forge lists
    that the catalog lacks are added with the forge's description; archived ones are dropped,
    so a stale URL to an archived repo is not a candidate.
    """
    live: dict[str, dict[str, Any]] = {}
    for item in list_org_repos(catalog.org):
        full = str(item.get("full_name") or "")
        if _FULL_NAME.match(full) and (include_archived or not item.get("archived")):
            live[full.lower()] = item
    kept: list[CatalogRepo] = []
    for repo in catalog.repositories:
        if repo.full_name.lower() in live or not live:
            kept.append(repo)
    known = {r.full_name.lower() for r in kept}
    for key, item in sorted(live.items()):
        if key not in known:
            kept.append(
                CatalogRepo(
                    full_name=str(item["full_name"]),
                    description=str(item.get("description") or ""),
                )
            )
    return Catalog(org=catalog.org, repositories=kept, also_orgs=catalog.also_orgs)


def merge_catalogs(catalogs: Sequence[Catalog]) -> Catalog:
    """One catalog answering for every org of ``catalogs`` (the first names it), so one ticket
    is weighed against all the repositories it may go to. An org listed twice, or a repository
    in two catalogs, is an ``InputError``: which org's settings it follows would be a guess."""
    if not catalogs:
        raise InputError("no catalog to detect the repository from")
    orgs = [org for c in catalogs for org in c.orgs]
    seen_orgs: set[str] = set()
    for org in orgs:
        if org.lower() in seen_orgs:
            raise InputError(f"org {org!r} has two catalogs")
        seen_orgs.add(org.lower())
    seen: dict[str, str] = {}
    for catalog in catalogs:
        for repo in catalog.repositories:
            first = seen.setdefault(repo.full_name.lower(), catalog.org)
            if first != catalog.org:
                raise InputError(f"{repo.full_name!r} is in the {first} and {catalog.org} catalogs")
    return Catalog(
        org=orgs[0],
        also_orgs=orgs[1:],
        repositories=[r for c in catalogs for r in c.repositories],
    )
