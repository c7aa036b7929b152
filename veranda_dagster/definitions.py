"""The one ``Definitions``: phase assets, their checks, the ticket job, sensors and resources.

Everything is configured from environment variables with working defaults, so the code location
loads on a machine with no keys at all; a phase that then needs a missing key says which.
"""

from __future__ import annotations

import os
from typing import Any

import dagster as dg

from veranda_dagster.assets import CHECKS, PHASE_ASSETS
from veranda_dagster.clients.limits import GITHUB_CODE_SEARCH_PER_MINUTE
from veranda_dagster.domain.bounds import CI_WAIT_TIMEOUT_S, TICKET_BUDGET_USD, VALIDATION_TIMEOUT_S
from veranda_dagster.executor import phase_executor
from veranda_dagster.jobs import ticket_run
from veranda_dagster.resources.pipeline import PipelineResource
from veranda_dagster.sensors.jira import jira_intake
from veranda_dagster.sensors.linear import LinearResource, linear_tickets
from veranda_dagster.sensors.pr_feedback import GitHubResource, pr_feedback
from veranda_dagster.sensors.run_failure import ticket_run_failures
from veranda_dagster.sensors.slack import SlackResource, slack_mentions
from veranda_dagster.settings import env_number
from veranda_dagster.storage import ValueStore, VerandaIOManager


def env(name: str, default: str = "") -> Any:
    """``dg.EnvVar(name)`` when set (resolved at launch, hidden in the UI), else ``default``."""
    return dg.EnvVar(name) if os.environ.get(name) else default


def pipeline_resource() -> PipelineResource:
    return PipelineResource(
        linear_url=env("LINEAR_API_URL", "https://api.linear.app/graphql"),
        linear_token=env("LINEAR_API_KEY"),
        slack_url=env("SLACK_API_URL", "https://slack.com/api"),
        slack_token=env("SLACK_BOT_TOKEN"),
        github_api_url=env("GITHUB_API_URL", "https://api.github.com"),
        github_git_base=env("GITHUB_GIT_BASE", "https://github.com"),
        github_token=env("GITHUB_TOKEN"),
        forge_name=env("VERANDA_FORGE", "github"),
        gitlab_api_url=env("GITLAB_API_URL", "https://gitlab.com"),
        gitlab_git_base=env("GITLAB_GIT_BASE", "https://gitlab.com"),
        gitlab_token=env("GITLAB_TOKEN"),
        sources=env("VERANDA_SOURCES", "linear,slack"),
        jira_base_url=env("JIRA_BASE_URL"),
        jira_email=env("JIRA_EMAIL"),
        jira_token=env("JIRA_API_TOKEN"),
        jira_api_version=env("JIRA_API_VERSION"),
        jira_label=env("JIRA_LABEL", "veranda"),
        jira_assignee=env("JIRA_ASSIGNEE"),
        jira_project=env("JIRA_PROJECT"),
        catalog_path=env("VERANDA_CATALOG"),
        workspace_root=env("VERANDA_WORKSPACES"),
        backends_file=env("VERANDA_BACKENDS_FILE"),
        runbooks_dir=env("VERANDA_RUNBOOKS_DIR"),
        hints_dir=env("VERANDA_HINTS_DIR"),
        code_search_per_minute=env_number(
            "VERANDA_CODE_SEARCH_PER_MINUTE", GITHUB_CODE_SEARCH_PER_MINUTE, int
        ),
        ci_wait_timeout_s=env_number("VERANDA_CI_WAIT_TIMEOUT_S", CI_WAIT_TIMEOUT_S, float),
        validation_timeout_s=env_number(
            "VERANDA_VALIDATION_TIMEOUT_S", VALIDATION_TIMEOUT_S, float
        ),
        ticket_budget_usd=env_number("VERANDA_TICKET_BUDGET_USD", TICKET_BUDGET_USD, float),
        ledger_backend=env("VERANDA_VALUE_STORE", "filesystem"),
        ledger_dir=env("VERANDA_VALUES_DIR"),
        ledger_postgres_url=env("VERANDA_POSTGRES_URL"),
    )


def value_store() -> ValueStore:
    return ValueStore(
        backend=env("VERANDA_VALUE_STORE", "filesystem"),
        base_dir=env("VERANDA_VALUES_DIR"),
        postgres_url=env("VERANDA_POSTGRES_URL"),
    )


def sensor_resources() -> dict[str, Any]:
    """The intake and feedback sensors' own clients; each binds its secret only when set, so a
    sensor without credentials skips with a reason instead of breaking the code location."""
    return {
        "linear": LinearResource.from_env(),
        "slack": SlackResource.from_env(),
        "github": GitHubResource.from_env(),
    }


def build_definitions() -> dg.Definitions:
    store = value_store()
    jira_sensors, jira_resources = jira_intake()  # off unless VERANDA_JIRA_INTAKE=1
    resources: dict[str, Any] = {
        "pipeline": pipeline_resource(),
        "value_store": store,
        "io_manager": VerandaIOManager(store=store),
    }
    return dg.Definitions(
        # dagster/code_references: each asset links to its module in the UI
        assets=dg.with_source_code_references(PHASE_ASSETS),
        asset_checks=CHECKS,
        jobs=[ticket_run],
        sensors=[linear_tickets, slack_mentions, pr_feedback, ticket_run_failures, *jira_sensors],
        resources={**sensor_resources(), **jira_resources, **resources},
        executor=phase_executor,
    )


defs = build_definitions()
