"""``TicketSourcesResource``: the enabled ticket sources, for reading a ticket and posting back.

``VERANDA_SOURCES`` (comma list, default: the on-by-default sources, ``linear,slack``) names the
sources a deployment takes tickets from; an opt-in source also has an older switch of its own
(``VERANDA_JIRA_INTAKE=1``). Both are read by ``resources.sources_enabled.enabled_sources``, the one
reading. The ``ticket`` phase fetches through ``fetch`` and every post (the ticket comment, the
fallback notice, the budget note, the failed-run note) goes through ``connected``, so a
``jira-PAY-17`` ticket is read from and answered on Jira, and a disabled source's key is a
``ConfigError`` naming the setting instead of a silent re-route.

Every registered source's resource is a field of this one, named for the source, and bound
once in the Definitions under that same key, where its sensor takes it. The fields are derived
from the registry (``registered_type``): Dagster resolves a nested resource's ``dg.EnvVar``
only through a declared field, so the class is built with one field per source rather than
holding them in a mapping.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from functools import cache

import pydantic
from pydantic import Field

from veranda_dagster.dagster_typing import Resource
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.ticket_source import TicketSource
from veranda_dagster.domain.intake import intake
from veranda_dagster.resources.sources_enabled import enabled_sources
from veranda_dagster.sources import registry
from veranda_dagster.sources.channel import TicketChannel
from veranda_dagster.sources.resource import SourceClient, TicketSourceResource


class TicketSourcesResource(Resource):
    """Which sources are on, and (in the registered subclass) each source's connection."""

    enabled: list[str] = Field(default_factory=list)

    @classmethod
    def of(
        cls, resources: Mapping[str, TicketSourceResource], enabled: Collection[str]
    ) -> TicketSourcesResource:
        """The resource over ``resources`` (one per registered source, by name); a source
        left out is unconfigured."""
        unknown = sorted(set(resources) - {i.name for i in registry.sources()})
        if unknown:
            raise ConfigError(f"not registered ticket source(s): {', '.join(unknown)}")
        complete = {i.name: resources.get(i.name) or i.resource() for i in registry.sources()}
        return registered_type()(**complete, enabled=list(enabled))

    @classmethod
    def from_env(
        cls,
        resources: Mapping[str, TicketSourceResource],
        environ: Mapping[str, str] | None = None,
    ) -> TicketSourcesResource:
        return cls.of(resources, enabled_sources(environ))

    def resource(self, name: str) -> TicketSourceResource:
        """The connection of source ``name``."""
        found = getattr(self, name, None)
        if not isinstance(found, TicketSourceResource):
            raise ConfigError(f"ticket source {name!r} has no resource here (use .of())")
        return found

    def is_enabled(self, name: str) -> bool:
        return name in self.enabled

    def live(self, opened: list[SourceClient]) -> list[TicketSource]:
        """The ports of the sources that are enabled and configured; each client built is
        added to ``opened`` as soon as it is built, for the caller to close."""
        ports: list[TicketSource] = []
        for info in registry.sources():
            resource = self.resource(info.name)
            if self.is_enabled(info.name) and resource.configured:
                client = resource.client()
                opened.append(client)
                ports.append(info.port(client))
        return ports

    @contextmanager
    def connected(self) -> Iterator[TicketChannel]:
        """Where posts to a ticket go (its own source's comment thread), over source clients
        closed on leaving: the daemon lives for weeks and a run worker runs every phase of a
        ticket, so a client left to the collector would keep its connection pool."""
        with self._ports() as ports:
            yield TicketChannel(ports)

    def fetch(self, key: str) -> Ticket:
        """The ticket behind a partition key, from the source that owns the key."""
        with self._ports() as ports:
            return intake.fetch_ticket(key, ports)

    @contextmanager
    def _ports(self) -> Iterator[list[TicketSource]]:
        """Every live source in routing order (``registry.ticket_sources``), closed after."""
        opened: list[SourceClient] = []
        try:
            yield registry.ticket_sources(self.live(opened), self.enabled)
        finally:
            for client in opened:
                client.close()


@cache
def registered_type() -> type[TicketSourcesResource]:
    """``TicketSourcesResource`` with one field per registered source, typed by its resource."""
    fields = {i.name: (i.resource, Field()) for i in registry.sources()}
    return pydantic.create_model(  # type: ignore[call-overload,no-any-return]
        "RegisteredTicketSources",
        __base__=TicketSourcesResource,
        __module__=__name__,
        **fields,
    )


def resources_from_env(environ: Mapping[str, str] | None = None) -> dict[str, TicketSourceResource]:
    """Every registered source's resource, read from the environment, by source name."""
    return {i.name: i.resource.from_env(environ) for i in registry.sources()}
