"""The one ``Definitions``: phase assets, their checks, the ticket job, sensors and resources.

Everything is configured from environment variables with working defaults, so the code location
loads on a machine with no keys at all; a phase that then needs a missing key says which.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any

import dagster as dg

from veranda_dagster.assets import CHECKS, PHASE_ASSETS
from veranda_dagster.assets._code_references import with_own_code_references
from veranda_dagster.assets._policy import (
    configured_names,
    model_retry_delay_override,
    with_configured_kinds,
    with_model_retry_delay,
)
from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.orgs import OrgsConfig
from veranda_dagster.executor import phase_executor
from veranda_dagster.jobs import ticket_run
from veranda_dagster.plugins import load_plugins
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.catalog import CatalogResource, ContextLayersResource
from veranda_dagster.resources.domain_calls import DOMAIN_CALLS_KEY, DomainCalls
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.orgs import ORGS_ENV, org_catalogs, orgs_from_env
from veranda_dagster.resources.tickets import TicketSourcesResource, resources_from_env
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sensors.pr_feedback import pr_feedback
from veranda_dagster.sensors.run_failure import ticket_run_failures
from veranda_dagster.sensors.workspace_sweep import workspace_sweep
from veranda_dagster.settings import setting
from veranda_dagster.sources import registry
from veranda_dagster.sources.resource import TicketSourceResource
from veranda_dagster.storage import ValueStore, VerandaIOManager


def value_store() -> ValueStore:
    return ValueStore(
        store_kind=setting("VERANDA_VALUE_STORE", "filesystem"),
        base_dir=setting("VERANDA_VALUES_DIR"),
        postgres_url=dg.EnvVar("VERANDA_POSTGRES_URL")
        if os.environ.get("VERANDA_POSTGRES_URL")
        else "",
    )


@dataclass(frozen=True)
class OutsideResources:
    """One resource per outside system, each reading its own settings and binding its secrets
    once. They are bound under these field names, and each ticket source's under the source's
    name (the sensors take them by key); ``tickets`` nests the same source instances, so one
    setting reaches every user of the system."""

    sources: dict[str, TicketSourceResource]
    """Every registered ticket source's resource, by source name (``sources.registry``)."""
    tickets: TicketSourcesResource
    forge: ForgeResource
    agents: AgentsResource
    workspace: WorkspaceResource

    orgs: OrgsConfig | None
    """The orgs file (``VERANDA_ORGS``): each org's forge, sources and catalog; ``None``: one
    forge and one catalog for everything."""

    @classmethod
    def from_env(cls, store: ValueStore) -> OutsideResources:
        sources = resources_from_env()
        orgs = orgs_from_env()
        return cls(
            orgs=orgs,
            sources=sources,
            tickets=TicketSourcesResource.from_env(sources),
            forge=ForgeResource.from_env(orgs=orgs),
            agents=AgentsResource.from_env(store),
            workspace=WorkspaceResource.from_env(),
        )

    def by_key(self) -> dict[str, Resource]:
        systems = {
            f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("sources", "orgs")
        }
        return {**self.sources, **systems}


def catalog_resource(outside: OutsideResources | None = None) -> CatalogResource:
    """``repo_guess``'s catalog: one file (``VERANDA_CATALOG``) or the orgs file's, not both."""
    orgs = outside.orgs if outside else orgs_from_env()
    catalog_path = setting("VERANDA_CATALOG")
    if orgs and catalog_path:
        raise ConfigError(
            f"set one of {ORGS_ENV} (a catalog per org) and VERANDA_CATALOG, not both"
        )
    return CatalogResource(catalog_path=catalog_path, org_catalogs=org_catalogs(orgs))


def layers_resource() -> ContextLayersResource:
    return ContextLayersResource(
        runbooks_dir=setting("VERANDA_RUNBOOKS_DIR"), hints_dir=setting("VERANDA_HINTS_DIR")
    )


def build_definitions() -> dg.Definitions:
    """The phase assets, their checks, the ticket job, the shared sensors and resources, merged
    with what each ticket source plugin contributes (its resource and its intake sensor)."""
    load_plugins()
    store = value_store()
    outside = OutsideResources.from_env(store)
    resources: dict[str, Any] = {
        **outside.by_key(),
        "catalog": catalog_resource(outside),
        "layers": layers_resource(),
        DOMAIN_CALLS_KEY: DomainCalls(),
        "value_store": store,
        "io_manager": VerandaIOManager(store=store),
    }
    phase_assets = with_model_retry_delay(PHASE_ASSETS, model_retry_delay_override())
    core = dg.Definitions(
        # dagster/code_references: each asset links to its own module in the UI
        assets=with_own_code_references(with_configured_kinds(phase_assets, configured_names())),
        asset_checks=CHECKS,
        jobs=[ticket_run],
        sensors=[pr_feedback, ticket_run_failures, workspace_sweep],
        resources={k: v for k, v in resources.items() if k not in outside.sources},
        executor=phase_executor,
    )
    enabled = outside.tickets.enabled
    plugins = [info.definitions(outside.sources[info.name], enabled) for info in registry.sources()]
    return dg.Definitions.merge(core, *plugins)


defs = build_definitions()
