"""veranda_dagster: an autonomous coding agent whose runs are Dagster assets.

Layers, outermost first: ``definitions``/``assets``/``sensors``/``resources`` (the Dagster shell),
``clients`` (thin httpx), ``backends`` (vendor CLIs behind a three-operation port), ``domain``
(pure logic and pydantic models, no Dagster import), ``sim`` (loopback fakes) and ``ops``.
"""
