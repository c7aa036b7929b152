"""veranda_dagster: an autonomous coding agent whose runs are Dagster assets.

Layers, outermost first: ``definitions``/``assets``/``sensors``/``resources`` (the Dagster shell),
``clients`` (thin httpx: trackers and forges), ``vendors`` (vendor CLIs behind a three-operation
port), ``domain`` (pure logic and pydantic models, no Dagster import, no vendor named), ``sim``
(what ``veranda demo``/``veranda dev`` run) and ``observability``.

The one thing done at import: what the providers know is registered with the domain (their
token shapes with the scrubber, the forges' URL grammars with repository detection), here,
because every module of the package is imported after this file, so no process can scrub a
text or read a ticket's links before the domain knows them. The providers load lazily.
"""

from collections.abc import Sequence

from veranda_dagster.domain.core import redaction as _redaction
from veranda_dagster.domain.intake import repo_evidence as _repo_evidence


def _provider_shapes() -> tuple[_redaction.TokenShape, ...]:
    from veranda_dagster.clients.token_shapes import provider_token_shapes

    return provider_token_shapes()


_redaction.register_shape_source(_provider_shapes)


def _forge_link_readers() -> Sequence[_repo_evidence.RepoLinkReader]:
    from veranda_dagster.forges.registry import link_readers

    return link_readers()


_repo_evidence.register_link_readers(_forge_link_readers)
