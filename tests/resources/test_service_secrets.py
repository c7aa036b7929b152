"""Every secret an outside-system resource binds is exported by both Helm services templates
(the code server's and the run pods') and documented as a secret in the README's table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.observability.render import load_values
from veranda_dagster.resources.secrets import SERVICE_SECRETS

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_KEY = "vault.hashicorp.com/agent-inject-template-services.env"
SECRETS = [(res, name) for res, names in SERVICE_SECRETS.items() for name in names]


def _service_templates(node: object) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == TEMPLATE_KEY and isinstance(value, str):
                found.append(value)
            else:
                found += _service_templates(value)
    elif isinstance(node, list):
        for item in node:
            found += _service_templates(item)
    return found


def _readme_secret_rows() -> str:
    text = (ROOT / "README.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return "\n".join(line for line in rows if "(secret" in line)


def test_the_new_systems_secrets_are_declared() -> None:
    names = {name for _, name in SECRETS}
    assert {"GITLAB_TOKEN", "JIRA_API_TOKEN", "JIRA_EMAIL", "GITHUB_TOKEN"} <= names


@pytest.mark.parametrize(("resource", "name"), SECRETS)
def test_every_service_secret_is_exported_by_both_helm_templates(resource, name) -> None:
    templates = _service_templates(load_values())
    assert len(templates) == 2, "the code server's and the run pods' services.env"
    for template in templates:
        assert re.search(rf"^\s*export {name}=", template, re.M), f"{resource}: {name}"


@pytest.mark.parametrize(("resource", "name"), SECRETS)
def test_every_service_secret_is_a_secret_row_in_the_readme(resource, name) -> None:
    assert f"`{name}`" in _readme_secret_rows(), f"{resource}: {name} in README as (secret)"
