"""Ticket source name -> everything about the source, in the generic plugin ``Registry``; the core
never names a source.

Each folder of this package declares one source in its ``plugin.py`` (``PLUGIN =
TicketSourceInfo(...)``): its port (whose class states the source's name and key grammar; fetch,
and post with the dedup marker), its resource (settings, client, the secrets it binds), its
intake sensor, and whether it is on by default, and the shapes of the tokens it issues. What
used to be wired by hand is derived here (which are enabled is read above, in
``resources.sources_enabled``, with the orgs file): the routing list (``ticket_sources``), the
owner of a key (``address``), the sensors the Definitions list (``listed_sensors``) and the
secrets the deployment and the docs must carry (``secret_env``). ``SOURCES`` refuses a source
missing a piece and two sources owning one key, since each omission used to fail silently (a
Jira ``ENG-123`` read as Linear's).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.domain.core.ticket_key import SOURCE_NAME, is_ticket_key
from veranda_dagster.domain.core.ticket_source import (
    KeyGrammar,
    SourcePort,
    TicketSource,
    UnconfiguredSource,
)
from veranda_dagster.registry import Registry
from veranda_dagster.sources.resource import TicketSourceResource


@dataclass(frozen=True)
class TicketSourceInfo:
    port: type[SourcePort[Any]]
    """The source's port class: its ``name`` and key grammar (``keys``) as class attributes,
    ``fetch`` and ``post`` (with the dedup marker) over a client from ``resource.client()``."""
    title: str
    """How people name the source in a message (``Linear``)."""
    resource: type[TicketSourceResource]
    secret_env: tuple[str, ...]
    """The variables its secrets arrive in; ``resource.from_env`` binds exactly these."""
    setup_hint: str
    """What to set for the source to work (``set LINEAR_API_KEY``), in every refusal."""
    sensor: dg.SensorDefinition
    token_shapes: tuple[TokenShape, ...]
    """The tokens it issues, so the scrubber masks them wherever they appear."""
    on_by_default: bool = False
    """In ``VERANDA_SOURCES``'s default, and its sensor listed even when not enabled (it skips
    until configured); an opt-in source's sensor is listed only when it is enabled."""
    alias_env: str | None = None
    """An older switch that also enables the source when it is ``1``."""

    @property
    def name(self) -> str:
        """``Ticket.source``, the prefix of its qualified keys, its item in ``VERANDA_SOURCES``
        and the key its resource is bound under (its sensor takes the resource by that key)."""
        return self.port.name

    @property
    def keys(self) -> KeyGrammar:
        return self.port.keys

    def definitions(
        self, resource: TicketSourceResource, enabled: Collection[str]
    ) -> dg.Definitions:
        """What this source adds to the code location, for ``definitions.py`` to merge: its
        resource, bound under its name (its sensor and the ``tickets`` resource take it there),
        and its intake sensor when it is listed (``listed``)."""
        sensors = [self.sensor] if self.listed(enabled) else []
        return dg.Definitions(sensors=sensors, resources={self.name: resource})

    def listed(self, enabled: Collection[str]) -> bool:
        """An on-by-default source's sensor is always listed (it skips until configured); an
        opt-in source's only when it is ``enabled`` (a deployment that never asked for it sees
        no change)."""
        return self.on_by_default or self.name in enabled


class _EveryVariableSet(dict[str, str]):
    """An environment in which every variable is set, so ``from_env`` binds every secret it
    reads, declared or not."""

    def get(self, key: str, default: object = None) -> str:
        return "set"

    def __getitem__(self, key: str) -> str:
        return "set"

    def __contains__(self, key: object) -> bool:
        return True


def _bound_secrets(resource: type[TicketSourceResource]) -> set[str]:
    """The variables ``resource.from_env`` binds as ``dg.EnvVar`` when all are set."""
    bound = resource.from_env(_EveryVariableSet())
    values = (getattr(bound, field) for field in type(bound).model_fields)
    return {v.env_var_name for v in values if isinstance(v, dg.EnvVar)}


def missing_pieces(info: TicketSourceInfo) -> list[str]:
    """What ``info`` fails to declare or declares wrong, in words a reader can act on."""
    unnamed = [f"port.{a}" for a in ("name", "keys") if not getattr(info.port, a, None)]
    if unnamed:
        return unnamed  # the other checks read both
    missing = [
        piece
        for piece in ("title", "setup_hint", "secret_env", "token_shapes")
        if not getattr(info, piece)
    ]
    missing += [
        f"token shape {shape.name} does not match its own sample"
        for shape in info.token_shapes
        if not re.fullmatch(shape.pattern, shape.sample)
    ]
    if not SOURCE_NAME.fullmatch(info.name):
        missing.append(f"name {info.name!r} is not lowercase letters and digits")
    example = info.keys.example
    if not is_ticket_key(example):
        missing.append(f"keys.example {example!r} is not a ticket key")
    elif not info.keys.owns(example):
        missing.append(f"keys.owns refuses the source's own example {example!r}")
    else:
        ticket = info.keys.address(example)
        if (ticket.id, ticket.source) != (example, info.name):
            missing.append(f"keys.address({example!r}) is not the {info.name} ticket {example}")
    if set(info.sensor.required_resource_keys) != {info.name}:
        taken = sorted(info.sensor.required_resource_keys)
        missing.append(f"sensor {info.sensor.name} takes resources {taken}, not [{info.name!r}]")
    declared, bound = set(info.secret_env), _bound_secrets(info.resource)
    missing += [f"secret_env {n} is bound by no field of the resource" for n in declared - bound]
    missing += [f"the resource binds {n}, which secret_env leaves out" for n in bound - declared]
    if info.resource.from_env({}).configured:
        missing.append("the resource is configured with no secret set")
    return missing


def shared_keys(infos: Sequence[TicketSourceInfo]) -> list[str]:
    """Each source's example key that another source also owns: routing would depend on order,
    and a key would be read from (and answered on) the wrong system."""
    shared = []
    for info in infos:
        example = info.keys.example
        others = [o.name for o in infos if o is not info and o.keys.owns(example)]
        if others:
            shared.append(
                f"ticket sources {info.name} and {', '.join(others)} both own {example!r}: "
                "qualify one source's keys with its name"
            )
    return shared


SOURCES: Registry[TicketSourceInfo] = Registry(
    "ticket source",
    "veranda_dagster.sources",
    name_of=lambda info: str(getattr(info.port, "name", "") or ""),
    missing_pieces=missing_pieces,
    conflicts=shared_keys,
)
"""The sources by name: each folder of ``sources/`` whose ``plugin.py`` declares ``PLUGIN``."""


def sources() -> list[TicketSourceInfo]:
    """Every registered source, in routing order (by name: keys never overlap, so the order
    only decides how a listing reads)."""
    return list(SOURCES.values())


def get(name: str) -> TicketSourceInfo:
    return SOURCES.require(name)


def address(key: str) -> Ticket:
    """The ticket a key names, from the source that owns it (a failed run's note is posted on a
    ticket that may never have been read)."""
    for info in sources():
        if info.keys.owns(key):
            return info.keys.address(key)
    raise ConfigError(f"ticket {key}: no ticket source owns this key")


def keys_mentioned(text: str) -> list[str]:
    """The ticket keys written in ``text``, by every source whose keys read in prose."""
    return [k for i in sources() if i.keys.mentioned for k in i.keys.mentioned(text)]


def ticket_sources(
    live: Sequence[TicketSource] = (), enabled: Collection[str] | None = None
) -> list[TicketSource]:
    """Every source a key may be routed to: the ``live`` ports first, then each registered
    source without one, unconfigured (naming its setting) or, when not in ``enabled`` (None:
    all are), refusing its keys by naming ``VERANDA_SOURCES``, so no key falls through."""
    given = {s.name for s in live}
    routed: list[TicketSource] = list(live)
    for info in sources():
        if enabled is not None and info.name not in enabled:
            hint = f"add {info.name} to VERANDA_SOURCES"
            routed.append(
                UnconfiguredSource(info.name, info.keys, hint, f"{info.title} (not enabled)")
            )
        elif info.name not in given:
            routed.append(UnconfiguredSource(info.name, info.keys, info.setup_hint, info.title))
    return routed


def listed_sensors(enabled: Collection[str]) -> list[dg.SensorDefinition]:
    """The intake sensors the Definitions list: every on-by-default source's, and an opt-in
    source's only when it is ``enabled`` (a deployment that never asked for it sees no
    change)."""
    return [i.sensor for i in sources() if i.listed(enabled)]


def secret_env() -> dict[str, tuple[str, ...]]:
    """source -> the variables its secrets arrive in, for the deployment and docs checks."""
    return {i.name: i.secret_env for i in sources()}
