"""veranda_dagster: an autonomous coding agent whose runs are Dagster assets.

Layers, outermost first (``[tool.importlinter]`` in ``pyproject.toml`` holds the code to them):
``definitions``/``cli``; ``assets``/``sensors``/``jobs``; ``resources``; the plugins
(``sources``, ``forges``, ``vendors``: one folder or file per plugin, registered by
``plugins.load_plugins``), ``observability`` and ``storage``; the shared ``http`` plumbing and
the generic plugin ``registry``; ``domain`` (pure logic and pydantic models, no Dagster import,
no vendor named); and ``sandbox``. ``sim`` is what ``veranda demo``/``veranda dev`` run.

Nothing of the product is done at import (only httpx's CLI is kept out, below): the plugins
are registered with the domain where the Definitions are built (``definitions.py``) and where
the CLI starts.
"""

import sys

HTTPX_CLI_MODULE = "httpx._main"
"""httpx's command-line client. ``import httpx`` imports it (and with it ``click``, ``rich`` and
``pygments``: about 70 modules, ~45 ms of CPU in every process that loads the code location,
each run worker included) unless importing it fails, in which case httpx defines a stub
``httpx.main`` instead: the path httpx takes when its ``cli`` extra is not installed. Nothing in
this package runs httpx's CLI, so the import is made to fail, once, here: the one place every
process of the product (run worker, code server, daemon, CLI, tests) passes through before its
first ``import httpx``. A process that imported httpx earlier keeps its client."""

sys.modules.setdefault(HTTPX_CLI_MODULE, None)  # type: ignore[arg-type]  # None: "not importable"
