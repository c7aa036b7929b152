"""The orgs file (``VERANDA_ORGS``), read when the code location loads and checked against this
build.

Its forges must be registered forge rows and its sources registered ticket sources, so a typo
is a ``ConfigError`` when the code location loads, naming the org and the choices, instead of
a ticket failing hours later. Without the variable there is no orgs file: one forge
(``VERANDA_FORGE``) and one catalog (``VERANDA_CATALOG``) serve everything, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.orgs import OrgsConfig, load_orgs
from veranda_dagster.domain.intake.catalog import Catalog, load_catalog, merge_catalogs
from veranda_dagster.forges.registry import FORGES
from veranda_dagster.settings import setting
from veranda_dagster.sources import source_names

ORGS_ENV = "VERANDA_ORGS"


def orgs_from_env(environ: Mapping[str, str] | None = None) -> OrgsConfig | None:
    path = setting(ORGS_ENV, "", environ)
    if not path:
        return None
    orgs = load_orgs(path)
    orgs.check_names(FORGES, source_names(), f"{ORGS_ENV} {path}")
    return orgs


class OrgCatalog(dg.Config):
    """What ``repo_guess`` needs of one org: its catalog and the sources it takes work from."""

    org: str
    catalog: str
    sources: list[str]


def org_catalogs(orgs: OrgsConfig | None) -> list[OrgCatalog]:
    return [
        OrgCatalog(org=o.name, catalog=o.catalog, sources=list(o.sources))
        for o in (orgs.orgs if orgs else [])
    ]


def catalog_for(ticket: Ticket, orgs: Sequence[OrgCatalog]) -> Catalog:
    """The catalogs of every org that takes tickets from the ticket's source, merged: a
    repository of any other org is never a candidate, whatever the ticket says."""
    taking = [o for o in orgs if ticket.source in o.sources]
    if not taking:
        raise ConfigError(
            f"ticket {ticket.id}: no org in {ORGS_ENV} takes tickets from {ticket.source} "
            "(add it to an org's sources)"
        )
    return merge_catalogs([load_catalog(o.catalog) for o in taking])


def sources_missing_from(enabled: Sequence[str], orgs: OrgsConfig) -> list[str]:
    """Sources an org takes tickets from that the deployment does not enable."""
    return [s for s in orgs.sources() if s not in enabled]
