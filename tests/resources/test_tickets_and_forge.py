"""The ``tickets`` resource routes a key to its enabled source (reading and posting back), and
refuses a disabled or unconfigured source's key by name; the ``forge`` resource is the
``VERANDA_FORGE`` row with its own variables, its token bound by ``dg.EnvVar``."""

from __future__ import annotations

import dagster as dg
import pytest

from tests.support.resources import tickets
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.resources.sources_enabled import enabled_sources
from veranda_dagster.sim.jira_fake import JiraFake
from veranda_dagster.sources.jira.resource import JiraResource

TOKEN = "ATATT3xFfGF0-fake-jira-token-resources"


def test_sources_default_to_linear_and_slack_and_take_jira_by_list_or_alias():
    assert enabled_sources({}) == ["linear", "slack"]
    assert enabled_sources({"VERANDA_SOURCES": "Linear, jira"}) == ["linear", "jira"]
    assert enabled_sources({"VERANDA_JIRA_INTAKE": "1"}) == ["linear", "slack", "jira"]
    with pytest.raises(ConfigError, match=r"unknown source.*trello.*choose from"):
        enabled_sources({"VERANDA_SOURCES": "linear,trello"})


def test_a_jira_ticket_is_read_from_and_answered_on_jira():
    with JiraFake(TOKEN) as fake:
        fake.file_issue(
            "PAY-17", "Refund double-charges", "Retries charge twice.", labels=["veranda"]
        )
        jira = JiraResource(base_url=fake.base_url, token=TOKEN, email=fake.email)
        resource = tickets(jira=jira, enabled=("linear", "jira"))
        ticket = resource.fetch("jira-PAY-17")
        assert (ticket.source, ticket.external_id) == ("jira", "PAY-17")
        with resource.connected() as channel:
            first = channel.post(ticket, "Run failed in phase `patch`", key="run-failed:abc")
            again = channel.post(ticket, "Run failed in phase `patch`", key="run-failed:abc")
        assert first == again and len(fake.comment_texts("PAY-17")) == 1


def test_a_disabled_or_unconfigured_sources_key_is_refused_by_name():
    with pytest.raises(ConfigError, match="add jira to VERANDA_SOURCES"):
        tickets().fetch("jira-PAY-17")
    with pytest.raises(ConfigError, match="JIRA_BASE_URL and JIRA_API_TOKEN"):
        tickets(enabled=("linear", "jira")).fetch("jira-PAY-17")
    with pytest.raises(ConfigError, match="add linear to VERANDA_SOURCES"):
        tickets(enabled=("slack", "jira")).fetch("ENG-12")
    with pytest.raises(ConfigError, match="LINEAR_API_KEY"):
        tickets().fetch("ENG-12")  # enabled, no key: the key's own variable


def test_gitlab_is_chosen_by_veranda_forge_with_its_own_variables(monkeypatch):
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-resource-test-0001")
    env = {
        "VERANDA_FORGE": "gitlab",
        "GITLAB_TOKEN": "glpat-resource-test-0001",
        "GITLAB_GIT_BASE": "http://127.0.0.1:9/git",
        "GITHUB_TOKEN": "ghp_not_this_one",
    }
    forge = ForgeResource.from_env(env)
    assert forge.forge == "gitlab" and forge.git_username == "oauth2"
    assert isinstance(forge.token, dg.EnvVar) and forge.token.env_var_name == "GITLAB_TOKEN"
    assert forge.clone_url("acme/platform/api") == "http://127.0.0.1:9/git/acme/platform/api.git"
    assert forge.parse_pr_url("http://127.0.0.1:9/git/acme/platform/api/-/merge_requests/7") == (
        "acme/platform/api",
        7,
    )
    with dg.build_resources({"forge": forge}) as built:
        assert built.forge.token == "glpat-resource-test-0001"  # resolved at launch only
    assert not ForgeResource.from_env({"VERANDA_FORGE": "gitlab"}).configured
    with pytest.raises(ConfigError, match=r"bitbucket.*not a known forge"):
        ForgeResource.from_env({"VERANDA_FORGE": "bitbucket"})
