"""veranda_dagster: an autonomous coding agent whose runs are Dagster assets.

Layers, outermost first: ``definitions``/``assets``/``sensors``/``resources`` (the Dagster shell),
``clients`` (thin httpx: trackers and forges), ``vendors`` (vendor CLIs behind a three-operation
port), ``domain`` (pure logic and pydantic models, no Dagster import, no vendor named), ``sim``
(what ``veranda demo``/``veranda dev`` run) and ``observability``.

The one thing done at import: the providers' token shapes are registered with the domain's
scrubber, here, because every module of the package is imported after this file, so no process
can scrub a text before the scrubber knows every shape. The shapes themselves load lazily.
"""

from veranda_dagster.domain import redaction as _redaction


def _provider_shapes() -> tuple[_redaction.TokenShape, ...]:
    from veranda_dagster.clients.token_shapes import provider_token_shapes

    return provider_token_shapes()


_redaction.register_shape_source(_provider_shapes)
