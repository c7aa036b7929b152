"""``SimWorld(tickets=..., forge=...)``: the env contract the product reads, and a ticket filed
in each source is exactly the key that source's real sensor asks for."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.forges.registry import forge_provider
from veranda_dagster.sim.choices import FORGES
from veranda_dagster.sim.driver import SensorDriver, instance_for
from veranda_dagster.sim.world import FAKE_TOKENS, FORGE_FAKES, SimWorld


def test_jira_and_gitlab_are_configured_through_the_env_contract(tmp_path: Path):
    with SimWorld(root=tmp_path / "w", tickets="jira", forge="gitlab") as world:
        env = world.env
        assert env["VERANDA_FORGE"] == "gitlab"
        assert env["GITLAB_API_URL"] == env["GITLAB_GIT_BASE"] == world.gitlab.base_url
        assert env["GITLAB_TOKEN"] == FAKE_TOKENS["GITLAB_TOKEN"] in world.secrets
        assert "jira" in env["VERANDA_SOURCES"].split(",") and env["VERANDA_JIRA_INTAKE"] == "1"
        assert env["JIRA_BASE_URL"] == world.jira.base_url
        assert (env["JIRA_EMAIL"], env["JIRA_API_VERSION"]) == (world.jira.email, "3")
        assert env["JIRA_API_TOKEN"] in world.secrets
        assert world.forge_fake is world.gitlab and world.sensor == "jira_tickets"
    with SimWorld(root=tmp_path / "d") as default:
        assert default.env["VERANDA_FORGE"] == "github" and "VERANDA_SOURCES" not in default.env
        assert "JIRA_BASE_URL" not in default.env and default.forge_fake is default.github


@pytest.mark.parametrize("tickets", ["jira", "slack", "linear"])
def test_a_filed_ticket_is_the_key_its_sensor_asks_for(tmp_path: Path, tickets: str):
    with SimWorld(root=tmp_path / "w", tickets=tickets) as world:
        world.apply_env()
        key = world.file_ticket("Invoice total ignores quantity", "Repo: acme/billing")
        with instance_for(str(world.dagster_home)) as instance:
            (request,) = SensorDriver().tick(instance, world.sensor)
        assert request.partition_key == key
        assert world.bot_comments(key) == [] and world.pull_requests() == []


def test_an_unknown_source_or_forge_is_refused_by_name(tmp_path: Path):
    with pytest.raises(ValueError, match="linear, slack, jira"):
        SimWorld(root=tmp_path, tickets="trello")
    with pytest.raises(ValueError, match="github, gitlab"):
        SimWorld(root=tmp_path, forge="bitbucket")


def test_every_offered_forge_has_a_fake_configured_from_its_own_row(tmp_path: Path):
    """The fakes are one table: each forge the demo offers is stood up and configured through
    its forge row's variables, so a new row needs only its fake in ``FORGE_FAKES``."""
    assert tuple(FORGE_FAKES) == FORGES
    with SimWorld(root=tmp_path / "w") as world:
        assert set(world.forges) == set(FORGES)
        for name, fake in world.forges.items():
            row = forge_provider(name)
            assert world.env[f"{row.env_prefix}_API_URL"] == fake.base_url
            assert world.env[f"{row.env_prefix}_GIT_BASE"] == fake.clone_base
            assert world.env[row.token_env] == fake.token  # type: ignore[attr-defined]
        assert world.env["GITHUB_GIT_BASE"] == str(world.org.git_base)  # bare repos, no HTTP
        assert world.github is world.forges["github"] and world.gitlab is world.forges["gitlab"]
