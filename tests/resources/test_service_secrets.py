"""Every secret an outside-system resource binds is exported by both Helm services templates
(the code server's and the run pods') and documented as a secret in the README's table."""

from __future__ import annotations

import re

import pytest

from tests.observability.render import load_values
from tests.support.secret_docs import readme_secret_rows, vault_templates
from veranda_dagster.resources.secrets import service_secrets

TEMPLATE_KEY = "vault.hashicorp.com/agent-inject-template-services.env"
SECRETS = [(res, name) for res, names in service_secrets().items() for name in names]


def test_the_new_systems_secrets_are_declared() -> None:
    names = {name for _, name in SECRETS}
    assert {"GITLAB_TOKEN", "JIRA_API_TOKEN", "JIRA_EMAIL", "GITHUB_TOKEN"} <= names


@pytest.mark.parametrize(("resource", "name"), SECRETS)
def test_every_service_secret_is_exported_by_both_helm_templates(resource, name) -> None:
    templates = vault_templates(load_values(), TEMPLATE_KEY)
    assert len(templates) == 2, "the code server's and the run pods' services.env"
    for template in templates:
        assert re.search(rf"^\s*export {name}=", template, re.M), f"{resource}: {name}"


@pytest.mark.parametrize(("resource", "name"), SECRETS)
def test_every_service_secret_is_a_secret_row_in_the_readme(resource, name) -> None:
    assert f"`{name}`" in readme_secret_rows(), f"{resource}: {name} in README as (secret)"
