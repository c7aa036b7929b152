"""Why ``TicketSourcesResource`` is completed at run time (``registered_type``) rather than
declared: Dagster derives a resource's config schema from its fields' declared types, so one
field holding every source's resource (``dict[str, TicketSourceResource]``) loses each
subclass's own settings and is refused; a declared field per source would name the sources in
shared code, which the plugin registry exists to avoid. The class built has one declared
field per registered source, typed by that source's resource, and nothing else."""

from __future__ import annotations

from typing import get_args

import dagster as dg
import pytest

from veranda_dagster.resources.tickets import TicketSourcesResource, registered_type
from veranda_dagster.sources import registry


class _Base(dg.ConfigurableResource):  # type: ignore[type-arg]
    pass


class _WithToken(_Base):
    token: str


class _Plain(_Base):
    url: str = "http://127.0.0.1:9"


class _AllInOneMapping(dg.ConfigurableResource):  # type: ignore[type-arg]
    sources: dict[str, _Base]


def _run_with(resource: dg.ConfigurableResource) -> None:  # type: ignore[type-arg]
    @dg.op(required_resource_keys={"tickets"})
    def touch(context: dg.OpExecutionContext) -> None:
        assert context.resources.tickets is not None

    @dg.job(resource_defs={"tickets": resource})
    def job() -> None:
        touch()

    job.execute_in_process()


def test_dagster_refuses_one_mapping_of_differently_shaped_resources(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("T31_TOKEN", "t")
    with pytest.raises(dg.DagsterInvalidConfigError, match='unexpected config entry "token"'):
        _run_with(
            _AllInOneMapping(sources={"a": _WithToken(token=dg.EnvVar("T31_TOKEN")), "b": _Plain()})
        )


def test_the_built_type_declares_one_field_per_registered_source() -> None:
    built = registered_type()
    assert issubclass(built, TicketSourcesResource)
    own = set(built.model_fields) - set(TicketSourcesResource.model_fields)
    assert own == {info.name for info in registry.sources()}
    for info in registry.sources():
        # Dagster widens a nested resource field to ``Resource | PartialResource``
        assert info.resource in get_args(built.model_fields[info.name].annotation)
