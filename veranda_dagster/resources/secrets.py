"""The secrets the outside-system resources bind, by resource key, derived from each module.

A deployment's secret templates (Helm's Vault ``services.env``) and the README's configuration
table must list every one; ``tests/resources/test_service_secrets.py`` holds them to it.
"""

from __future__ import annotations

from veranda_dagster.resources import forge, jira, linear, slack

SERVICE_SECRETS: dict[str, tuple[str, ...]] = {
    "linear": linear.SECRET_ENV,
    "slack": slack.SECRET_ENV,
    "jira": jira.SECRET_ENV,
    "forge": forge.SECRET_ENV,
}
