"""Per-org settings and detection over several orgs' catalogs merged."""

from __future__ import annotations

import pytest

from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.core.orgs import load_orgs, parse_orgs
from veranda_dagster.domain.intake.catalog import Catalog, CatalogRepo, merge_catalogs
from veranda_dagster.domain.intake.repo_detection import detect_repo

ACME = Catalog(
    org="acme",
    repositories=[
        CatalogRepo(full_name="acme/billing-api", aliases=["billing"]),
        CatalogRepo(full_name="acme/web"),
    ],
)
DATA = Catalog(
    org="acme-data",
    repositories=[
        CatalogRepo(full_name="acme-data/platform/pipeline", former_names=["etl"]),
        CatalogRepo(full_name="acme-data/warehouse"),
    ],
)
BOTH = merge_catalogs([ACME, DATA])


def _ticket(title: str, description: str = "") -> Ticket:
    return Ticket(id="jira-PAY-1", source="jira", title=title, description=description)


def test_merged_catalog_answers_for_every_org():
    assert BOTH.orgs == ["acme", "acme-data"] and BOTH.title == "acme, acme-data"
    assert BOTH.in_org("acme-data/platform") and BOTH.in_org("acme") and not BOTH.in_org("other")
    assert [r.full_name for r in BOTH.resolve("platform/pipeline")] == [
        "acme-data/platform/pipeline"
    ]
    assert [r.full_name for r in BOTH.resolve("acme-data/pipeline")] == [
        "acme-data/platform/pipeline"
    ]
    assert [r.full_name for r in BOTH.resolve("etl")] == ["acme-data/platform/pipeline"]
    assert [r.full_name for r in BOTH.resolve("billing")] == ["acme/billing-api"]


@pytest.mark.parametrize(
    ("title", "description", "repo"),
    [
        (
            "Nightly load drops rows",
            "repo: acme-data/platform/pipeline",
            "acme-data/platform/pipeline",
        ),
        (
            "Warehouse view is stale",
            "The `warehouse` nightly view misses yesterday.",
            "acme-data/warehouse",
        ),
        (
            "Job fails",
            "See https://gitlab.example.com/acme-data/platform/pipeline/-/blob/main/load.py#L3",
            "acme-data/platform/pipeline",
        ),
        ("Invoice rounding", "repo: acme/billing-api", "acme/billing-api"),
    ],
)
def test_a_ticket_finds_its_repository_in_whichever_org_holds_it(title, description, repo):
    guess = detect_repo(_ticket(title, description), BOTH)
    assert (guess.decision, guess.repo) == ("proceed", repo)


def test_names_from_two_orgs_with_comparable_weight_ask_instead_of_picking_one():
    guess = detect_repo(_ticket("billing-api and warehouse disagree on totals"), BOTH)
    assert guess.decision == "ask"
    assert set(guess.candidates) == {"acme/billing-api", "acme-data/warehouse"}


def test_an_undeclared_repository_is_asked_about_naming_every_org():
    guess = detect_repo(_ticket("Fix it", "repo: acme-data/nothing-here"), BOTH)
    assert guess.decision == "ask" and "acme, acme-data catalog" in (guess.question or "")


def test_merging_refuses_an_org_twice_or_a_repository_in_two_catalogs():
    with pytest.raises(InputError, match="org 'acme' has two catalogs"):
        merge_catalogs([ACME, ACME])
    stray = Catalog(org="acme-data", repositories=[CatalogRepo(full_name="acme-data/web")])
    other = Catalog(org="acme-data", repositories=[])
    with pytest.raises(InputError, match="two catalogs"):
        merge_catalogs([stray, other])
    with pytest.raises(InputError, match="no catalog"):
        merge_catalogs([])


ORGS_YAML = """
orgs:
  - name: acme
    forge: hub
    sources: [tracker-a, chat]
    catalog: catalogs/acme.yaml
  - name: acme-data
    forge: lab
    api_url: https://lab.acme.internal
    token_env: LAB_TOKEN_DATA
    sources: [Tracker-B]
    catalog: /etc/veranda/acme-data.yaml
"""


def test_orgs_file_routes_sources_and_repositories_to_orgs(tmp_path):
    path = tmp_path / "orgs.yaml"
    path.write_text(ORGS_YAML)
    orgs = load_orgs(path)
    assert orgs.orgs[0].catalog == str(tmp_path / "catalogs/acme.yaml")
    assert orgs.orgs[1].catalog == "/etc/veranda/acme-data.yaml"
    assert orgs.sources() == ["tracker-a", "chat", "tracker-b"]
    assert orgs.forges() == ["hub", "lab"]
    orgs.check_names(["hub", "lab"], ["tracker-a", "tracker-b", "chat"], "orgs")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"orgs": []}, "field 'orgs'"),
        ({"orgs": [{"name": "a", "forge": "hub", "sources": ["x"]}]}, "field 'orgs.0.catalog'"),
        (
            {"orgs": [{"name": "a", "forge": "hub", "sources": [], "catalog": "c.yaml"}]},
            "field 'orgs.0.sources'",
        ),
        (
            {"orgs": [{"name": "a/b", "forge": "hub", "sources": ["x"], "catalog": "c.yaml"}]},
            "not an org name",
        ),
        (
            {
                "orgs": [
                    {
                        "name": "a",
                        "forge": "hub",
                        "sources": ["x"],
                        "catalog": "c.yaml",
                        "token_env": "ghp_x1",
                    }
                ]
            },
            "not an environment variable name",
        ),
        (
            {
                "orgs": [
                    {
                        "name": "a",
                        "forge": "hub",
                        "sources": ["x"],
                        "catalog": "c.yaml",
                        "token": "s",
                    }
                ]
            },
            "'orgs.0.token'",
        ),
        (
            {"orgs": [{"name": "a", "forge": "h", "sources": ["x"], "catalog": "c.yaml"}] * 2},
            "org 'a' is listed twice",
        ),
    ],
)
def test_a_bad_orgs_file_is_a_config_error_naming_the_field(data, message):
    with pytest.raises(ConfigError, match=message):
        parse_orgs(data, "orgs file x.yaml")


def test_unknown_forge_or_source_names_the_org_and_the_choices():
    orgs = parse_orgs(
        {"orgs": [{"name": "a", "forge": "hub", "sources": ["x"], "catalog": "c.yaml"}]}, "f"
    )
    with pytest.raises(ConfigError, match=r"org 'a': unknown forge 'hub'; choose from lab"):
        orgs.check_names(["lab"], ["x"], "f")
    with pytest.raises(ConfigError, match=r"org 'a': unknown source\(s\) x; choose from y"):
        orgs.check_names(["hub"], ["y"], "f")


def test_a_missing_or_binary_orgs_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        load_orgs(tmp_path / "absent.yaml")
    binary = tmp_path / "orgs.yaml"
    binary.write_bytes(b"\x00\x01")
    with pytest.raises(ConfigError):
        load_orgs(binary)
