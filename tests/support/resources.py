"""Building the outside-system resources for a test, with offline defaults.

A test replaces one collaborator by passing a different resource (``pipeline(forge=...)``),
never by subclassing ``PipelineResource``'s forwarding. ``forge_returning`` is the one place a
resource is subclassed: a ``ForgeResource`` whose ``client()`` hands back a given fake.
"""

from __future__ import annotations

from typing import Any

from veranda_dagster.forges.registry import ForgeClient
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.pipeline import PipelineResource
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
    """``PipelineResource``'s nested resources, unconfigured (no keys), with ``overrides``."""
    base: dict[str, Any] = {
        "tickets": tickets(),
        "forge": ForgeResource(),
        "agents": AgentsResource(store=ValueStore()),
        "workspace": WorkspaceResource(),
    }
    return {**base, **overrides}


def pipeline(**overrides: Any) -> PipelineResource:
    """A real ``PipelineResource`` over offline resources; pass any nested one or field."""
    return PipelineResource(**nested(**overrides))


def forge_returning(client: ForgeClient | Any, **settings: Any) -> ForgeResource:
    """A ``ForgeResource`` whose ``client()`` is ``client`` (an in-memory forge)."""

    class FixedForge(ForgeResource):
        def client(self) -> ForgeClient:
            return client  # type: ignore[no-any-return]

    return FixedForge(**settings)
