"""The catalog builder's GitHub half through ``httpx.MockTransport``: the org's repository list
(paged, with topics and languages) and rename redirects (``GET /repos/{owner}/{old}`` -> 301 ->
``/repositories/{id}``), merged with a hand-kept file by ``build_catalog``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.intake import catalog_builder
from veranda_dagster.domain.intake.catalog import Catalog
from veranda_dagster.domain.intake.catalog_builder import build_catalog
from veranda_dagster.forges.github.client import GitHubClient

FIX = Path(__file__).parents[2] / "fixtures" / "github"
API = "https://api.github.test"


def body(name: str):
    return json.loads((FIX / name).read_text())


def handler(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path == "/orgs/acme/repos" and request.url.params.get("page") != "2":
        assert request.url.params["type"] == "all"
        nxt = f'<{API}/orgs/acme/repos?page=2&per_page=100&type=all>; rel="next"'
        return httpx.Response(200, json=body("org_repos_page1.json"), headers={"link": nxt})
    if path == "/orgs/acme/repos":
        return httpx.Response(200, json=body("org_repos_page2.json"))
    if path == "/repos/acme/payments-legacy":
        return httpx.Response(
            301,
            json=body("repo_moved_301.json"),
            headers={"location": f"{API}/repositories/1296269"},
        )
    if path == "/repositories/1296269":
        return httpx.Response(200, json=body("org_repos_page1.json")[0])
    if path == "/repos/acme/evil-redirect":
        return httpx.Response(301, headers={"location": "https://elsewhere.test/repositories/1"})
    if path == "/repos/acme/billing-api":
        return httpx.Response(200, json=body("org_repos_page1.json")[0])
    return httpx.Response(404, json={"message": "Not Found"})


@pytest.fixture
def client() -> GitHubClient:
    return GitHubClient(
        API, "ghs_test", transport=httpx.MockTransport(handler), sleep=lambda s: None
    )


def test_lists_every_page_of_the_org(client):
    names = [r["full_name"] for r in client.list_org_repositories("acme")]
    assert names == ["acme/billing-api", "acme/old-dashboard", "acme/notifier"]


def test_an_old_name_resolves_to_the_renamed_repository(client):
    assert client.get_repository("acme", "payments-legacy")["full_name"] == "acme/billing-api"
    assert client.get_repository("acme", "never-existed") is None


def test_a_rename_redirect_off_the_configured_origin_is_refused(client):
    with pytest.raises(InputError, match="off-origin"):
        client.get_repository("acme", "evil-redirect")


def test_build_merges_github_with_the_hand_kept_file(client):
    hand = Catalog.model_validate(
        {
            "org": "acme",
            "repositories": [
                {
                    "full_name": "acme/billing-api",
                    "aliases": ["payments"],
                    "service": ["moneypipe"],
                    "former_names": ["payments-legacy", "billing-api"],
                },
                {"full_name": "acme/protos", "description": "hand only"},
            ],
        }
    )
    built, notes = build_catalog(
        "acme", client.list_org_repositories("acme"), hand, client.get_repository
    )
    billing = built.by_full_name("acme/billing-api")
    assert billing.aliases == ["payments"] and billing.service == ["moneypipe"]
    assert billing.description == "Invoices and payments" and billing.topics == [
        "payments",
        "stripe",
    ]
    assert billing.languages == ["Python"]
    assert billing.former_names == ["payments-legacy", "billing-api"]
    assert built.by_full_name("acme/old-dashboard") is None
    assert built.by_full_name("acme/notifier").languages == ["Go"]
    assert built.by_full_name("acme/protos").description == "hand only"
    assert any("archived acme/old-dashboard" in n for n in notes)


def test_a_former_name_github_does_not_confirm_is_dropped(client):
    hand = Catalog.model_validate(
        {"org": "acme", "repositories": [{"full_name": "acme/notifier", "former_names": ["gone"]}]}
    )
    built, notes = build_catalog(
        "acme", client.list_org_repositories("acme"), hand, client.get_repository
    )
    assert built.by_full_name("acme/notifier").former_names == []
    assert any("dropped former name gone" in n for n in notes)


def test_rename_lookups_stop_at_the_bound(monkeypatch):
    monkeypatch.setattr(catalog_builder, "MAX_RENAME_LOOKUPS", 2)
    calls = []

    def resolve(owner, name):
        calls.append(name)
        return {"full_name": "acme/api"}

    hand = Catalog.model_validate(
        {
            "org": "acme",
            "repositories": [{"full_name": "acme/api", "former_names": ["a", "b", "c"]}],
        }
    )
    built, notes = build_catalog("acme", [{"full_name": "acme/api"}], hand, resolve)
    assert calls == ["a", "b"] and built.repositories[0].former_names == ["a", "b", "c"]
    assert any("not checked (lookup bound)" in n for n in notes)
