"""``veranda intake serve``: refuses to start without an instance, and reads its secrets and
the poll's filters from the same variables as the rest of the product."""

from __future__ import annotations

import pytest

from veranda_dagster.cli import EXIT_BAD_INPUT, main
from veranda_dagster.sources.webhook_server import scope_from_env, secrets_from_env


def test_serve_without_dagster_home_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert main(["intake", "serve", "--port", "0"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "DAGSTER_HOME is not set" in err and "Traceback" not in err


def test_only_the_sources_with_a_secret_set_are_on() -> None:
    environ = {"LINEAR_WEBHOOK_SECRET": " abc ", "SLACK_SIGNING_SECRET": "", "OTHER": "x"}
    assert secrets_from_env(environ) == {"linear": "abc"}


def test_the_push_scope_is_read_where_the_poll_reads_it() -> None:
    scope = scope_from_env(
        {"LINEAR_BOT_USER_ID": "u1", "JIRA_ASSIGNEE": "acc-9", "JIRA_PROJECT": "PAY"}
    )
    assert (scope.linear_bot_user_id, scope.linear_label) == ("u1", "veranda")
    assert (scope.jira_assignee, scope.jira_label, scope.jira_project) == (
        "acc-9",
        "veranda",
        "PAY",
    )
