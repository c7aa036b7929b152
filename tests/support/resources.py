"""Building the outside-system resources for a test, with offline defaults.

A test replaces one collaborator by passing a different resource (``nested(forge=...)``) to
the phase asset's own call (``phase_call``) or to a Definitions. ``forge_returning`` is the
one place a resource is subclassed: a ``ForgeResource`` whose ``client()`` hands back a given fake.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from veranda_dagster.assets._shell import PHASE_CALLS
from veranda_dagster.domain.core.models import WorkOrder
from veranda_dagster.forges.registry import ForgeClient
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.catalog import CatalogResource, ContextLayersResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.tickets import TicketSourcesResource
from veranda_dagster.resources.workspace import WorkspaceResource
from veranda_dagster.sources.resource import TicketSourceResource
from veranda_dagster.storage import ValueStore


def tickets(
    enabled: tuple[str, ...] = ("linear", "slack"), **sources: TicketSourceResource
) -> TicketSourcesResource:
    """The tickets resource over ``sources`` (by source name: ``linear=LinearResource(...)``);
    every other registered source is there unconfigured."""
    return TicketSourcesResource.of(sources, enabled)


def nested(**overrides: Any) -> dict[str, Any]:
    """The phase assets' resources by key, unconfigured (no keys), with ``overrides``."""
    base: dict[str, Any] = {
        "tickets": tickets(),
        "forge": ForgeResource(),
        "agents": AgentsResource(store=ValueStore()),
        "workspace": WorkspaceResource(),
        "catalog": CatalogResource(),
        "layers": ContextLayersResource(),
    }
    return {**base, **overrides}


def phase_call(phase: str, **given: Any) -> BaseModel:
    """Run ``phase``'s own call (the function its asset runs) outside Dagster, with the offline
    resources of ``nested`` overridden by any in ``given`` and the upstream values in
    ``given`` (a ``ticket`` and ``context_pack`` given stand for the work order that the
    predecessor's value carries); a call takes only the parameters it names."""
    import inspect

    call: Callable[..., BaseModel] = PHASE_CALLS[phase]
    offered = {**nested(), **given}
    if "order" not in given and "ticket" in given:  # the order the predecessor would carry
        offered["order"] = WorkOrder(ticket=given["ticket"], pack=given.get("context_pack"))
    names = inspect.signature(call).parameters
    return call(**{name: offered[name] for name in names if name in offered})


def forge_returning(client: ForgeClient | Any, **settings: Any) -> ForgeResource:
    """A ``ForgeResource`` whose ``client()`` is ``client`` (an in-memory forge)."""

    class FixedForge(ForgeResource):
        def client(self) -> ForgeClient:
            return client  # type: ignore[no-any-return]

    return FixedForge(**settings)
