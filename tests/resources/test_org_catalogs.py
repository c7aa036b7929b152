"""Per-org sources: a ticket is weighed only against the orgs that take its source, and the
deployment's enabled sources follow the orgs file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.repo_detection import detect_repo
from veranda_dagster.resources.catalog import CatalogResource
from veranda_dagster.resources.orgs import OrgCatalog, org_catalogs, orgs_from_env
from veranda_dagster.resources.sources_enabled import enabled_sources, requested_sources


def _catalog(path: Path, org: str, names: list[str]) -> str:
    path.write_text(json.dumps({"org": org, "repositories": [{"full_name": n} for n in names]}))
    return str(path)


@pytest.fixture
def orgs_file(tmp_path: Path) -> Path:
    path = tmp_path / "orgs.json"
    path.write_text(
        json.dumps(
            {
                "orgs": [
                    {
                        "name": "acme",
                        "forge": "github",
                        "sources": ["linear", "slack"],
                        "catalog": _catalog(tmp_path / "a.json", "acme", ["acme/billing"]),
                    },
                    {
                        "name": "acme-data",
                        "forge": "gitlab",
                        "sources": ["jira"],
                        "catalog": _catalog(tmp_path / "d.json", "acme-data", ["acme-data/etl"]),
                    },
                ]
            }
        )
    )
    return path


def _ticket(source: str, text: str) -> Ticket:
    key = {"jira": "jira-PAY-1", "linear": "ENG-1", "slack": "slack-C1-1.0"}[source]
    return Ticket(id=key, source=source, title="Totals are wrong", description=text)


def test_a_ticket_is_weighed_only_against_the_orgs_taking_its_source(orgs_file):
    orgs = orgs_from_env({"VERANDA_ORGS": str(orgs_file)})
    resource = CatalogResource(org_catalogs=org_catalogs(orgs))
    assert resource.for_ticket(_ticket("jira", "")).names() == ["acme-data/etl"]
    assert resource.for_ticket(_ticket("slack", "")).names() == ["acme/billing"]

    # acme takes no Jira tickets: its repository is not a candidate, so the ticket is asked about
    guess = detect_repo(
        _ticket("jira", "repo: acme/billing"), resource.for_ticket(_ticket("jira", ""))
    )
    assert guess.decision == "ask" and "acme-data catalog" in (guess.question or "")


def test_a_source_no_org_takes_is_a_config_error_naming_the_orgs_file():
    resource = CatalogResource(
        org_catalogs=[OrgCatalog(org="acme", catalog="x.json", sources=["jira"])]
    )
    with pytest.raises(ConfigError, match="no org in VERANDA_ORGS takes tickets from linear"):
        resource.for_ticket(_ticket("linear", ""))


def test_the_orgs_sources_are_the_enabled_sources_unless_told_otherwise(orgs_file):
    env = {"VERANDA_ORGS": str(orgs_file)}
    assert enabled_sources(env) == ["linear", "slack", "jira"]
    assert enabled_sources({**env, "VERANDA_SOURCES": "jira,linear,slack"}) == [
        "jira",
        "linear",
        "slack",
    ]
    with pytest.raises(ConfigError, match="takes tickets from jira, which VERANDA_SOURCES"):
        enabled_sources({**env, "VERANDA_SOURCES": "linear,slack"})


def test_a_broken_orgs_file_fails_where_the_sources_are_enabled_not_where_they_are_shown(
    tmp_path,
):
    bad = tmp_path / "orgs.yaml"
    bad.write_text(
        "orgs:\n  - name: acme\n    forge: nowhere\n    sources: [linear]\n    catalog: c\n"
    )
    env = {"VERANDA_ORGS": str(bad)}
    assert requested_sources(env) == ["linear", "slack"]  # the UI's kind icons still render
    with pytest.raises(ConfigError, match="org 'acme': unknown forge 'nowhere'"):
        enabled_sources(env)


def test_an_orgs_file_and_a_single_catalog_together_are_refused(orgs_file, monkeypatch):
    from veranda_dagster.definitions import catalog_resource

    monkeypatch.setenv("VERANDA_ORGS", str(orgs_file))
    monkeypatch.setenv("VERANDA_CATALOG", "/etc/veranda/catalog.yaml")
    with pytest.raises(ConfigError, match="set one of VERANDA_ORGS"):
        catalog_resource()


def test_the_ui_names_every_forge_the_orgs_use(orgs_file, tmp_path):
    from veranda_dagster.resources.forge import requested_forges

    assert requested_forges({"VERANDA_ORGS": str(orgs_file), "VERANDA_FORGE": "github"}) == [
        "github",
        "gitlab",
    ]
    assert requested_forges({"VERANDA_FORGE": "gitlab"}) == ["gitlab"]
    broken = tmp_path / "broken.yaml"
    broken.write_text("orgs: []\n")
    assert requested_forges({"VERANDA_ORGS": str(broken)}) == ["github"]  # refused at load
