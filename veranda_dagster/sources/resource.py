"""``TicketSourceResource``: what every ticket source's resource provides.

The source registry (``sources.registry``) binds each source's resource under the source's name,
nests it in the ``tickets`` resource, builds the source's port over its client and polls through
it, all without naming a source; this base is the contract that lets it. Each subclass reads its
own settings in ``from_env`` and binds its secrets there with ``dg.EnvVar``, so the variables a
source declares (``TicketSourceInfo.secret_env``) are checked against what it really binds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Protocol, Self

from veranda_dagster.dagster_typing import Resource


class SourceClient(Protocol):
    """A source's API client as the sensor holds it: opened per tick, closed after."""

    def close(self) -> None: ...


class TicketSourceResource(Resource, ABC):
    """One ticket source's connection settings; secrets arrive through ``dg.EnvVar``."""

    @classmethod
    @abstractmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """The settings from the environment; an unset secret means "not configured", never a
        code-location load error."""

    @property
    @abstractmethod
    def configured(self) -> bool:
        """Whether the credentials the source needs are set."""

    @abstractmethod
    def client(self) -> SourceClient:
        """A new client of the source's API (the caller closes it)."""
