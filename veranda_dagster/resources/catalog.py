"""``CatalogResource``: what ``repo_guess`` may pick from, one catalog or a catalog per org.

With an orgs file (``VERANDA_ORGS``) each org's catalog serves only the tickets of the sources
that org takes; without one, ``VERANDA_CATALOG`` serves every ticket. Both at once is refused
where the Definitions are built (``definitions.catalog_resource``).
"""

from __future__ import annotations

from pydantic import Field

from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.context.pack import ContextConfig
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake import repo_detection
from veranda_dagster.domain.intake.catalog import Catalog
from veranda_dagster.resources.orgs import OrgCatalog, catalog_for


class CatalogResource(Resource):
    """The repository catalog(s) a ticket's repository is detected from."""

    catalog_path: str = ""
    """The repo catalog file (``VERANDA_CATALOG``)."""
    org_catalogs: list[OrgCatalog] = Field(default_factory=list)
    """With an orgs file (``VERANDA_ORGS``): each org's catalog and the sources it takes
    tickets from, in place of ``catalog_path``."""

    def for_ticket(self, ticket: Ticket) -> Catalog:
        """What ``ticket`` may go to: with an orgs file, the catalogs of the orgs taking its
        source, merged; else the one catalog."""
        if self.org_catalogs:
            return catalog_for(ticket, self.org_catalogs)
        if not self.catalog_path:
            raise ConfigError("catalog_path is empty: set VERANDA_CATALOG to the repo catalog file")
        return repo_detection.load_catalog(self.catalog_path)


class ContextLayersResource(Resource):
    """The operator's instruction-layer directories the context pack writes into the clone
    (``VERANDA_RUNBOOKS_DIR``, ``VERANDA_HINTS_DIR``); empty means the pack's defaults."""

    runbooks_dir: str = ""
    hints_dir: str = ""

    def config(self) -> ContextConfig:
        """The layer directories that are set; the rest keep the config's defaults."""
        return ContextConfig(
            runbooks_dir=self.runbooks_dir or None, hints_dir=self.hints_dir or None
        )
