"""``veranda catalog`` against loopback forges: an org's repositories become the catalog that
repository detection chooses from (subgroups, archived projects, renames, hand-kept aliases)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veranda_dagster.cli import main
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.domain.intake.catalog import load_catalog
from veranda_dagster.domain.intake.repo_detection import detect_repo
from veranda_dagster.sim.github_fake import GitHubFake
from veranda_dagster.sim.gitlab_fake import GitLabFake
from veranda_dagster.sim.sample_org import create_bare_repo

TOKEN = "glpat-catalog-test-token-01"
README = {"README.md": "# x\n\nA project\n"}


@pytest.fixture
def gitlab(tmp_path: Path):
    git, scratch = tmp_path / "git", tmp_path / "scratch"
    scratch.mkdir()
    for path in ("data/platform/billing", "data/platform/old-ledger", "data/web/shop"):
        create_bare_repo(git, path, README, scratch)
    create_bare_repo(git, "other/elsewhere", README, scratch)
    with GitLabFake(git, token=TOKEN) as fake:
        fake.rename("data/web/shop", "data/web/storefront")
        fake.archive("data/platform/old-ledger")
        yield fake


def _orgs_file(tmp_path: Path, fake: GitLabFake) -> Path:
    path = tmp_path / "orgs.yaml"
    path.write_text(
        "orgs:\n"
        "  - name: data\n"
        "    forge: gitlab\n"
        f"    api_url: {fake.base_url}\n"
        "    token_env: GITLAB_TOKEN_DATA\n"
        "    sources: [jira]\n"
        "    catalog: data.json\n"
    )
    return path


def test_a_gitlab_groups_projects_become_the_catalog_detection_reads(
    gitlab, tmp_path, monkeypatch, capsys
):
    hand = tmp_path / "hand.yaml"
    hand.write_text(
        "org: data\nrepositories:\n"
        "  - full_name: data/platform/billing\n    aliases: [payments]\n"
        "  - full_name: data/web/storefront\n    former_names: [data/web/shop, data/gone]\n"
    )
    monkeypatch.setenv("VERANDA_ORGS", str(_orgs_file(tmp_path, gitlab)))
    monkeypatch.setenv("VERANDA_FORGE", "github")  # the default forge; the org's is GitLab
    monkeypatch.setenv("GITLAB_TOKEN_DATA", TOKEN)
    out = tmp_path / "data.json"
    code = main(["catalog", "--org", "data", "--hand-kept", str(hand), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    catalog = load_catalog(out)
    assert catalog.org == "data"
    assert sorted(catalog.names()) == ["data/platform/billing", "data/web/storefront"]
    assert catalog.by_full_name("data/platform/billing").aliases == ["payments"]
    assert catalog.by_full_name("data/web/storefront").former_names == ["data/web/shop"]
    assert "left out archived data/platform/old-ledger" in err
    assert "dropped former name data/gone of data/web/storefront" in err
    assert TOKEN not in err + out.read_text()

    link = "https://gitlab.com/data/web/shop/-/issues/3"
    ticket = Ticket(id="jira-D-1", source="jira", title="Cart broken", description=link)
    guess = detect_repo(ticket, catalog)
    assert (guess.decision, guess.repo, guess.signal) == (
        "proceed",
        "data/web/storefront",
        "former_name",
    )


def test_without_a_token_for_the_orgs_forge_it_names_the_variable(gitlab, tmp_path, monkeypatch):
    monkeypatch.setenv("VERANDA_ORGS", str(_orgs_file(tmp_path, gitlab)))
    monkeypatch.delenv("GITLAB_TOKEN_DATA", raising=False)
    with pytest.raises(Exception, match="set GITLAB_TOKEN_DATA"):
        from veranda_dagster.cli import catalog

        catalog.run(
            type(
                "A", (), {"org": "data", "hand_kept": None, "out": None, "include_archived": False}
            )
        )


def test_a_github_orgs_repositories_go_to_stdout(tmp_path, monkeypatch, capsys):
    git, scratch = tmp_path / "git", tmp_path / "scratch"
    scratch.mkdir()
    for name in ("acme/billing", "acme/web"):
        create_bare_repo(git, name, README, scratch)
    with GitHubFake(git, token="ghp_catalogtesttoken000000000000000000000") as fake:
        monkeypatch.delenv("VERANDA_ORGS", raising=False)
        monkeypatch.setenv("VERANDA_FORGE", "github")
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", fake.token)
        assert main(["catalog", "--org", "acme"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["org"] == "acme"
    assert [r["full_name"] for r in data["repositories"]] == ["acme/billing", "acme/web"]
