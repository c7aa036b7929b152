"""The Helm values' secrets, checked by structure (the YAML parsed, each Vault template read
into its exports), not by searching text: every secret a vendor or an outside system declares
is exported from Vault data, under the path its pod injects, exactly once in each pod that
runs the code; no secret is a literal anywhere in the values."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.observability.render import load_values
from tests.support.helm_secrets import (
    Export,
    TemplateError,
    parse_template,
    plain_env,
    vault_exports,
)
from veranda_dagster.resources.secrets import service_secrets
from veranda_dagster.sources import webhook_auth
from veranda_dagster.vendors import registry

FILES = {"providers.env": registry.secret_env(), "services.env": service_secrets()}
"""Which rendered file each registry's secrets belong in."""
DECLARED = [(file, owner, name) for file, table in FILES.items() for owner, names in table.items()
            for name in names]  # fmt: skip
SECRETISH = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.I)


def _pods(exports: list[Export]) -> set[str]:
    return {e.pod for e in exports}


def test_both_pods_that_run_code_render_both_files() -> None:
    exports = vault_exports(load_values())
    pods = _pods(exports)
    assert len(pods) == 2, "the code server's and the run pods' annotations"
    for pod in pods:
        assert {e.file for e in exports if e.pod == pod} == set(FILES), pod


@pytest.mark.parametrize(("file", "owner", "name"), DECLARED)
def test_every_declared_secret_is_exported_once_per_pod_from_vault(file, owner, name) -> None:
    exports = vault_exports(load_values())
    for pod in _pods(exports):
        mine = [e for e in exports if e.pod == pod and e.name == name]
        assert [e.file for e in mine] == [file], f"{owner}'s {name} in {pod}"


def test_no_name_is_exported_twice_in_a_pod() -> None:
    counts = Counter((e.pod, e.name) for e in vault_exports(load_values()))
    assert [k for k, n in counts.items() if n > 1] == []


def test_no_secret_is_a_literal_env_value_anywhere_in_the_values() -> None:
    literal = [(w, n) for w, n, _v in plain_env(load_values()) if SECRETISH.search(n)]
    assert literal == []


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('export GITHUB_TOKEN="ghp_literal"', "not read from Vault data"),
        ('export GITHUB_TOKEN="{{ . }}"', "not read from Vault data"),
        ("GITHUB_TOKEN=x", "unexpected line"),
    ],
)
def test_a_template_line_outside_the_grammar_or_not_from_vault_is_refused(line, reason) -> None:
    text = '{{- with secret "secret/data/veranda/services" -}}\n' + line + "\n{{- end }}"
    with pytest.raises(TemplateError, match=reason):
        parse_template("pod", "services.env", text)


def test_an_export_outside_its_secret_block_is_refused_where_a_text_search_would_pass() -> None:
    text = 'export GITHUB_TOKEN="{{ .Data.data.github_token }}"\n'
    assert re.search(r"^\s*export GITHUB_TOKEN=", text, re.M)  # the old check: passes
    with pytest.raises(TemplateError, match="exported outside a secret"):
        parse_template("pod", "services.env", text)


def test_a_template_reading_another_path_than_its_pod_injects_is_refused() -> None:
    values = {
        "annotations": {
            "vault.hashicorp.com/agent-inject-secret-services.env": "secret/data/veranda/services",
            "vault.hashicorp.com/agent-inject-template-services.env": (
                '{{- with secret "secret/data/other" -}}\n'
                'export GITHUB_TOKEN="{{ .Data.data.github_token }}"\n{{- end }}'
            ),
        }
    }
    with pytest.raises(TemplateError, match="reads secret/data/other, the pod injects"):
        vault_exports(values)


def test_optional_keys_are_read_inside_their_with_block() -> None:
    exports = vault_exports(load_values())
    gitlab = {e for e in exports if e.name == "GITLAB_TOKEN"}
    assert gitlab and all(e.optional and e.key == "gitlab_token" for e in gitlab)


@pytest.mark.parametrize("name", sorted(webhook_auth.SECRET_ENV.values()))
def test_no_pod_that_runs_the_code_gets_a_webhook_secret(name) -> None:
    """The receiver alone verifies signatures; a run pod holding the secret could forge them."""
    exports = vault_exports(load_values())
    assert [e.pod for e in exports if e.name == name] == []
    assert [w for w, n, _v in plain_env(load_values()) if n == name] == []
