"""The secrets the outside-system resources bind, by resource key: each ticket source's as its
registration declares them (``sources.registry.secret_env``), and the forge rows'.

A deployment's secret templates (Helm's Vault ``services.env``) and the README's configuration
table must list every one; ``tests/resources/test_service_secrets.py`` holds them to it, so a
new source's secrets fail that test until both list them.
"""

from __future__ import annotations

from veranda_dagster.resources import forge
from veranda_dagster.sources import registry


def service_secrets() -> dict[str, tuple[str, ...]]:
    """Every secret an outside-system resource binds, by the key it is bound under."""
    return {**registry.secret_env(), "forge": forge.SECRET_ENV}
