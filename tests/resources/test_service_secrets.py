"""Every secret an outside-system resource binds is documented as a secret in the README's
table. That both Helm ``services.env`` templates (the code server's and the run pods') export
each one from Vault is checked by structure in ``tests/observability/test_helm_secrets.py``."""

from __future__ import annotations

import pytest

from tests.support.secret_docs import readme_secret_rows
from veranda_dagster.resources.secrets import service_secrets

SECRETS = [(res, name) for res, names in service_secrets().items() for name in names]


def test_the_new_systems_secrets_are_declared() -> None:
    names = {name for _, name in SECRETS}
    assert {"GITLAB_TOKEN", "JIRA_API_TOKEN", "JIRA_EMAIL", "GITHUB_TOKEN"} <= names


@pytest.mark.parametrize(("resource", "name"), SECRETS)
def test_every_service_secret_is_a_secret_row_in_the_readme(resource, name) -> None:
    assert f"`{name}`" in readme_secret_rows(), f"{resource}: {name} in README as (secret)"
