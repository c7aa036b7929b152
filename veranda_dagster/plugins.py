"""The one place plugins are registered and handed to the domain; ``definitions.py`` and the
CLI call ``load_plugins`` before anything else.

Every kind of plugin (model vendors, ticket sources, forges) is a generic ``Registry`` that finds
its built-in plugins itself; what the domain must know of them, without ever naming one, is
handed over here: the shapes of every token a provider issues (to the scrubber) and every
forge's URL grammar (to repository detection), and the repository setup step (to the work
phases). Nothing is registered at import, so the order
in which modules load cannot decide what a process knows.
"""

from __future__ import annotations

from veranda_dagster.domain.core import redaction
from veranda_dagster.domain.core.redaction import TokenShape
from veranda_dagster.domain.intake import repo_evidence
from veranda_dagster.domain.work import turn
from veranda_dagster.environment.setup import prepare_environment
from veranda_dagster.forges.registry import FORGES, forge_token_shapes, link_readers
from veranda_dagster.sources.registry import SOURCES
from veranda_dagster.vendors.registry import VENDORS, token_patterns


def provider_token_shapes() -> tuple[TokenShape, ...]:
    """The ticket sources' token shapes, every forge's, then every model vendor's."""
    sources = tuple(shape for info in SOURCES.values() for shape in info.token_shapes)
    return sources + forge_token_shapes() + tuple(token_patterns())


def load_plugins() -> None:
    """Discover every plugin of every kind (an incomplete one is a ``ConfigError`` here) and
    hand the domain what it reads of them. Idempotent: each step happens once per process."""
    for registry in (VENDORS, SOURCES, FORGES):
        registry.discover()
    redaction.register_shape_source(provider_token_shapes)
    repo_evidence.register_link_readers(link_readers)
    turn.register_environment_preparer(prepare_environment)
