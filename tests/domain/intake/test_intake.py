"""Ticket conversion and ``fetch_ticket`` routing, against recorded Linear/Slack shapes."""

from __future__ import annotations

import pytest

from tests.sources.linear.test_linear_client import Script, fixture, reply
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.domain.intake.intake import fetch_ticket
from veranda_dagster.sources.linear.client import LinearClient
from veranda_dagster.sources.linear.ticket import LinearTicketSource, ticket_from_linear
from veranda_dagster.sources.registry import ticket_sources
from veranda_dagster.sources.slack.client import SlackClient
from veranda_dagster.sources.slack.ticket import (
    SlackTicketSource,
    mentions,
    strip_mentions,
    ticket_from_slack,
)


def test_linear_node_maps_labels_attachments_and_uuid():
    node = fixture("linear/get_issue_eng_123.json")["data"]["issue"]
    ticket = ticket_from_linear(node)
    assert ticket.id == "ENG-123" and ticket.source == "linear"
    assert ticket.external_id == "9cfb482a-81e3-4154-b5b9-2c805e70a02d"
    assert ticket.labels == ["veranda", "repo:billing-api"]
    assert [a.url for a in ticket.attachments] == ["https://github.com/acme/billing-api/pull/42"]
    assert ticket.updated_at == "2026-08-01T10:00:00.000Z"
    assert "repo: acme/billing-api" in ticket.description


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"title": None}, "title"),
        ({"identifier": "eng 123"}, "identifier"),
        ({"id": ""}, "id"),
        ({"labels": {"nodes": "x"}}, "labels.nodes"),
        ({"description": 5}, "description"),
    ],
)
def test_malformed_linear_node_names_the_field(patch, field):
    node = {**fixture("linear/get_issue_eng_123.json")["data"]["issue"], **patch}
    with pytest.raises(InputError, match=field):
        ticket_from_linear(node)


def test_slack_message_strips_the_bot_mention_and_titles_by_first_line():
    message = fixture("slack/history_page1.json")["messages"][0]
    ticket = ticket_from_slack("C0ACME001", message, bot_user_id="U111")
    assert ticket.id == "slack-C0ACME001-1712345680.000300"
    assert ticket.title == "the invoice PDF is blank"
    assert ticket.description == "repo: acme/billing-api"
    assert ticket.external_id == "C0ACME001" and ticket.thread_ts == "1712345680.000300"


def test_slack_thread_replies_fold_into_the_description():
    thread = fixture("slack/replies_thread.json")["messages"]
    ticket = ticket_from_slack("C0ACME001", thread[0], bot_user_id="U111", replies=thread[1:])
    assert ticket.title == "deploy is done"
    assert ticket.description == "nice\ncan you bump the notifier timeout?"


def test_slack_message_that_is_only_a_mention_is_rejected():
    with pytest.raises(InputError, match="'text'"):
        ticket_from_slack("C1", {"ts": "1.2", "text": "<@U111>"}, bot_user_id="U111")
    with pytest.raises(InputError, match="'ts'"):
        ticket_from_slack("C1", {"text": "hi"})


def test_mentions_by_token_or_rich_text_block_and_strip_keeps_others():
    assert mentions({"text": "hey <@U111|bot>"}, "U111")
    assert mentions(
        {"text": "x", "blocks": [{"elements": [{"type": "user", "user_id": "U111"}]}]}, "U111"
    )
    assert not mentions({"text": "hey <@U222>"}, "U111")
    assert strip_mentions("<@U111> ask <@U222>", "U111") == "ask <@U222>"


def test_fetch_ticket_routes_by_key_shape():
    linear = LinearClient(
        "https://linear.test/graphql",
        "lin_api_x",
        transport=Script({"GetIssue": [reply("linear/get_issue_eng_123.json")]}).transport(),
    )
    ticket = fetch_ticket("ENG-123", ticket_sources([LinearTicketSource(linear)]))
    assert ticket.external_id.startswith("9cfb482a")
    slack_script = Script({"conversations.replies": [reply("slack/replies_thread.json")]})
    slack = SlackClient(
        "https://slack.test/api", "xoxb-x", transport=slack_script.transport(), bot_user_id="U111"
    )
    sources = ticket_sources([SlackTicketSource(slack)])
    ticket = fetch_ticket("slack-C0ACME001-1712345670.000200", sources)
    assert ticket.source == "slack" and ticket.thread_ts == "1712345670.000200"
    assert slack_script.requests[0].url.params["ts"] == "1712345670.000200"


def test_fetch_ticket_without_a_client_names_the_env_var_and_bad_keys_are_input_errors():
    with pytest.raises(ConfigError, match="LINEAR_API_KEY"):
        fetch_ticket("ENG-1", ticket_sources())
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN"):
        fetch_ticket("slack-C0ACME001-1712345670.000200", ticket_sources())
    with pytest.raises(InputError, match="not a ticket key"):
        fetch_ticket("not a key", ticket_sources())
    with pytest.raises(InputError, match="not a ticket key"):
        fetch_ticket("ENG-1\n", ticket_sources())


def test_fetch_ticket_with_malformed_issue_names_the_field():
    linear = LinearClient(
        "https://linear.test/graphql",
        "lin_api_x",
        transport=Script({"GetIssue": [reply("linear/get_issue_missing_title.json")]}).transport(),
    )
    with pytest.raises(InputError, match="'title'"):
        fetch_ticket("ENG-123", ticket_sources([LinearTicketSource(linear)]))


def _nested_mention(levels: int, user_id: str) -> list[dict]:
    """A user element inside ``levels`` lists of blocks (level 1: the top-level list)."""
    blocks: list[dict] = [{"type": "user", "user_id": user_id}]
    for _ in range(levels - 1):
        blocks = [{"type": "rich_text_section", "elements": blocks}]
    return blocks


def test_block_mentions_are_found_down_to_the_depth_bound_and_not_past_it():
    from veranda_dagster.sources.slack.limits import MAX_SLACK_BLOCK_DEPTH

    deepest = {"text": "", "blocks": _nested_mention(MAX_SLACK_BLOCK_DEPTH + 1, "U1")}
    too_deep = {"text": "", "blocks": _nested_mention(MAX_SLACK_BLOCK_DEPTH + 2, "U1")}
    assert mentions(deepest, "U1")
    assert not mentions(too_deep, "U1")


def test_fetch_ticket_routes_over_the_sources_and_a_key_nobody_owns_names_them():
    from veranda_dagster.domain.core.models import Ticket

    class Acme:
        name = "acme"

        def owns(self, key: str) -> bool:
            return key.startswith("acme-")

        def fetch(self, key: str) -> Ticket:
            return Ticket(id=key, source="acme", title="t")

        def post(self, ticket: Ticket, text: str, marker: str) -> str:
            return marker

    sources = ticket_sources([Acme()])
    assert fetch_ticket("acme-PAY-17", sources).source == "acme"
    with pytest.raises(ConfigError, match=r"no configured ticket source .*acme, jira, linear, sl"):
        fetch_ticket("other-PAY-17", sources)
