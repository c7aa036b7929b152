"""``DomainCalls``: where a phase asset's one domain call runs.

The shell (``assets._shell``) hands every phase's call here as a thunk with the phase's name
and its upstream inputs, and this resource runs it: in a deployment that is all it does. It
exists so a test that wants the asset graph without the domain (re-execution, fresh processes,
the executor) binds a scripted ``DomainCalls`` under the same key, which answers by phase name
and refuses a phase it has no answer for, instead of subclassing a composite of every phase
and silently running a new phase's real code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from veranda_dagster.dagster_typing import Resource

V = TypeVar("V")

DOMAIN_CALLS_KEY = "domain"
"""The resource key every phase asset requires; the shell adds it to each asset's parameters."""


class DomainCalls(Resource):
    """Runs each phase's domain call as it is."""

    def call(self, phase: str, domain_call: Callable[[], V], inputs: Mapping[str, object]) -> V:
        """``domain_call()``, the phase's own composition of its resources and the domain entry
        point; ``phase`` and ``inputs`` (the upstream values by name) are for a scripted
        stand-in, which answers from them instead."""
        return domain_call()
