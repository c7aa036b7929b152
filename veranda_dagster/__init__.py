"""veranda_dagster: an autonomous coding agent whose runs are Dagster assets.

Layers, outermost first (``[tool.importlinter]`` in ``pyproject.toml`` holds the code to them):
``definitions``/``cli``; ``assets``/``sensors``/``jobs``; ``resources``; the plugins
(``sources``, ``forges``, ``vendors``: one folder or file per plugin, registered by
``plugins.load_plugins``), ``observability`` and ``storage``; the shared ``http`` plumbing and
the generic plugin ``registry``; ``domain`` (pure logic and pydantic models, no Dagster import,
no vendor named); and ``sandbox``. ``sim`` is what ``veranda demo``/``veranda dev`` run.

Nothing is done at import: the plugins are registered with the domain where the Definitions
are built (``definitions.py``) and where the CLI starts.
"""
