"""``JiraResource``: the one binding of the Jira token, shared by the ``jira_tickets`` sensor,
the ``ticket`` phase (``jira-`` keys) and every post back to a Jira issue.

``JIRA_API_TOKEN`` is one variable for both deployments: a Cloud API token with ``JIRA_EMAIL``
(basic auth), a Data Center personal access token without it (bearer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pydantic import Field

from veranda_dagster.settings import secret, setting
from veranda_dagster.sources.jira.client import ApiVersion, JiraClient
from veranda_dagster.sources.resource import TicketSourceResource

TOKEN_ENV = "JIRA_API_TOKEN"
EMAIL_ENV = "JIRA_EMAIL"
SECRET_ENV = (TOKEN_ENV, EMAIL_ENV)
"""The secrets this resource binds (the email too: it names the bot account)."""


class JiraResource(TicketSourceResource):
    """Jira connection settings; secrets arrive through ``dg.EnvVar``."""

    base_url: str | None = None
    token: str | None = Field(default=None, repr=False)
    email: str | None = Field(default=None, repr=False)
    """Set for Jira Cloud (basic auth with an API token); unset means Data Center (a PAT)."""
    api_version: str | None = None
    """``3`` (Cloud) or ``2`` (Data Center); unset = chosen by whether ``email`` is set."""
    label: str | None = "veranda"
    assignee: str | None = None
    project: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> JiraResource:
        return cls(
            base_url=setting("JIRA_BASE_URL", "", environ) or None,
            token=secret(TOKEN_ENV, environ),
            email=secret(EMAIL_ENV, environ),
            api_version=setting("JIRA_API_VERSION", "", environ) or None,
            label=setting("JIRA_LABEL", "veranda", environ) or None,
            assignee=setting("JIRA_ASSIGNEE", "", environ) or None,
            project=setting("JIRA_PROJECT", "", environ) or None,
        )

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.token)

    def client(self) -> JiraClient:
        return JiraClient(
            self.base_url or "",
            self.token,
            email=self.email,
            # the client refuses anything but "2"/"3" with a ConfigError naming the value
            api_version=cast(ApiVersion | None, self.api_version),
            label=self.label,
            assignee=self.assignee,
            project=self.project,
        )
