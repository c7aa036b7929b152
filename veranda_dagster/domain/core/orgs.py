"""Per-org settings: which forge holds an org's code and which ticket sources may send it work.

One deployment often serves several orgs that work differently: one org's code on a hosted
forge with tickets from one tracker, another's on a self-managed forge with tickets from
another. The orgs file (``VERANDA_ORGS``, JSON or YAML; the README shows one) says so once per
org: its forge and that forge's connection (the *name* of the variable holding its token, never
the token), the ticket sources it takes work from, and its catalog.

A ticket is only ever routed to a repository of an org that takes tickets from its source, so a
ticket from one tracker cannot open a pull request in an org that only works from another; and
every phase after ``repo_guess`` talks to the forge of the chosen repository's org. The names
of forges and sources are checked against what the build knows by the caller (``check_names``),
because the domain names neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import Field, field_validator, model_validator

from veranda_dagster.domain.core.bounds import MAX_CONFIG_FILE_BYTES
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.input_files import load_document, validate_document
from veranda_dagster.domain.core.models import Strict

_ORG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


def org_of(path: str) -> str:
    """The org a repository (``acme/payments/ledger``) or an owner (``acme/payments``) is in:
    its first segment, lowercased. Every call is routed by this one rule, so a repository's
    clone credentials and its API calls always go to the same org's forge."""
    return path.strip("/").split("/", 1)[0].lower()


class OrgSettings(Strict):
    name: str
    forge: str
    sources: list[str] = Field(min_length=1)
    catalog: str = Field(min_length=1)
    """The org's repository catalog file (``veranda catalog`` builds one from the forge);
    relative paths are read beside the orgs file."""
    api_url: str = ""
    """The forge's REST base for this org; empty = the forge's configured or hosted default."""
    git_base: str = ""
    token_env: str = ""
    """The variable holding this org's forge token; empty = the forge's own (``*_TOKEN``)."""
    daily_budget_usd: float | None = Field(default=None, gt=0)
    """USD every ticket of this org together may spend on model requests per UTC day; none =
    no daily cap (each ticket still has its own)."""

    @field_validator("name")
    @classmethod
    def _org_name(cls, value: str) -> str:
        if not _ORG.match(value):
            raise ValueError(f"{value!r} is not an org name (letters, digits, '-', '_', '.')")
        return value

    @field_validator("token_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if value and not _ENV_NAME.match(value):
            raise ValueError(f"{value!r} is not an environment variable name (A-Z, 0-9, _)")
        return value

    @field_validator("sources")
    @classmethod
    def _lower(cls, values: list[str]) -> list[str]:
        return list(dict.fromkeys(v.strip().lower() for v in values))


class OrgsConfig(Strict):
    orgs: list[OrgSettings] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_entry_per_org(self) -> OrgsConfig:
        seen: set[str] = set()
        for org in self.orgs:
            if org.name.lower() in seen:
                raise ValueError(f"org {org.name!r} is listed twice")
            seen.add(org.name.lower())
        return self

    def sources(self) -> list[str]:
        """Every source some org takes tickets from: the sources whose sensors should run."""
        return list(dict.fromkeys(s for org in self.orgs for s in org.sources))

    def forges(self) -> list[str]:
        return list(dict.fromkeys(org.forge for org in self.orgs))

    def check_names(self, forges: Iterable[str], sources: Iterable[str], where: str) -> None:
        """A forge or source this build does not know is a ``ConfigError`` naming the org and
        the choices, at load rather than when the first ticket arrives."""
        known_forges, known_sources = list(forges), list(sources)
        for org in self.orgs:
            if org.forge not in known_forges:
                raise ConfigError(
                    f"{where}: org {org.name!r}: unknown forge {org.forge!r}; "
                    f"choose from {', '.join(known_forges)}"
                )
            unknown = [s for s in org.sources if s not in known_sources]
            if unknown:
                raise ConfigError(
                    f"{where}: org {org.name!r}: unknown source(s) {', '.join(unknown)}; "
                    f"choose from {', '.join(known_sources)}"
                )


def parse_orgs(data: object, where: str) -> OrgsConfig:
    return validate_document(OrgsConfig, data, where, ConfigError)


def load_orgs(path: str | Path) -> OrgsConfig:
    """The orgs file, with every org's relative catalog path made absolute beside it."""
    path = Path(path)
    where = f"orgs file {path}"
    data = load_document(path, what="orgs file", max_bytes=MAX_CONFIG_FILE_BYTES, error=ConfigError)
    orgs = parse_orgs(data, where)
    base = path.resolve().parent
    return orgs.model_copy(
        update={
            "orgs": [
                org.model_copy(update={"catalog": str(base / org.catalog)})
                if not Path(org.catalog).is_absolute()
                else org
                for org in orgs.orgs
            ]
        }
    )
