"""TicketChannel: a Linear comment or a Slack thread reply, posted once per marker."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.sources.linear.test_linear_client import Script, fixture, reply
from veranda_dagster.domain.core.errors import ConfigError, InputError
from veranda_dagster.domain.core.models import Ticket
from veranda_dagster.sources.channel import TicketChannel, post_marker
from veranda_dagster.sources.linear.client import LinearClient
from veranda_dagster.sources.linear.ticket import LinearTicketSource
from veranda_dagster.sources.registry import ticket_sources
from veranda_dagster.sources.slack.client import SlackClient
from veranda_dagster.sources.slack.ticket import SlackTicketSource

LINEAR_TICKET = Ticket(
    id="ENG-123", source="linear", title="t", external_id="9cfb482a-81e3-4154-b5b9-2c805e70a02d"
)
SLACK_TICKET = Ticket(
    id="slack-C1H9RESGL-1482960137.003543",
    source="slack",
    title="t",
    external_id="C1H9RESGL",
    thread_ts="1482960137.003543",
)


class FakeLinearComments:
    """A Linear whose comment list grows when commentCreate is called."""

    def __init__(self) -> None:
        self.bodies: list[str] = []
        self.pasted: list[str] = []
        """Bodies a person wrote (another user id)."""
        viewer = httpx.Response(200, json={"data": {"viewer": {"id": "u-bot"}}})
        self.script = Script(
            {
                "IssueComments": [self.comments],
                "CommentCreate": [self.create],
                "Viewer": [lambda request: viewer],
            }
        )

    def comments(self, request: httpx.Request) -> httpx.Response:
        data = fixture("linear/comments_empty.json")
        nodes = data["data"]["issue"]["comments"]["nodes"]
        nodes += [
            {"id": f"h{i}", "body": b, "user": {"id": "u-eve"}} for i, b in enumerate(self.pasted)
        ]
        nodes += [
            {"id": f"c{i + 10}", "body": b, "user": {"id": "u-bot"}}
            for i, b in enumerate(self.bodies)
        ]
        return httpx.Response(200, json=data)

    def create(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content)["variables"]["input"]["body"])
        data = fixture("linear/comment_create.json")
        data["data"]["commentCreate"]["comment"]["id"] = f"c{len(self.bodies) + 9}"
        return httpx.Response(200, json=data)


def test_linear_comment_is_posted_once_with_a_hidden_marker():
    fake = FakeLinearComments()
    linear = LinearClient(
        "https://linear.test/graphql", "lin_api_x", transport=fake.script.transport()
    )
    channel = TicketChannel(ticket_sources([LinearTicketSource(linear)]))
    first = channel.post(LINEAR_TICKET, "Which repository?")
    again = channel.post(LINEAR_TICKET, "Which repository?")
    assert first == again == "c10" and len(fake.bodies) == 1
    assert fake.bodies[0].startswith("Which repository?")
    assert f"<!-- {post_marker(LINEAR_TICKET, 'Which repository?')} -->" in fake.bodies[0]
    other = channel.post(LINEAR_TICKET, "PR opened")
    assert other == "c11" and len(fake.bodies) == 2


def test_a_linear_marker_a_person_pasted_does_not_stop_our_post():
    fake = FakeLinearComments()
    fake.pasted.append(f"lol <!-- {post_marker(LINEAR_TICKET, 'PR opened')} -->")
    linear = LinearClient(
        "https://linear.test/graphql", "lin_api_x", transport=fake.script.transport()
    )
    channel = TicketChannel(ticket_sources([LinearTicketSource(linear)]))
    assert channel.post(LINEAR_TICKET, "PR opened") == "c10" and len(fake.bodies) == 1


def test_slack_reply_goes_in_the_thread_with_metadata_and_is_not_repeated():
    posted: list[dict] = []

    def replies(request):
        data = fixture("slack/replies_with_marker_template.json")
        for body in posted:
            data["messages"].append(
                {
                    "type": "message",
                    "user": "U111",
                    "bot_id": "B1",
                    "text": body["text"],
                    "ts": "1503435956.000247",
                    "metadata": body["metadata"],
                }
            )
        return httpx.Response(200, json=data)

    def post(request):
        posted.append(json.loads(request.content))
        return reply("slack/post_message.json")

    script = Script({"conversations.replies": [replies], "chat.postMessage": [post]})
    slack = SlackClient(
        "https://slack.test/api", "xoxb-x", transport=script.transport(), bot_user_id="U111"
    )
    channel = TicketChannel(ticket_sources([SlackTicketSource(slack)]))
    assert channel.post(SLACK_TICKET, "PR opened", key="pr") == "1503435956.000247"
    assert channel.post(SLACK_TICKET, "PR opened (retry)", key="pr") == "1503435956.000247"
    assert len(posted) == 1
    assert posted[0]["thread_ts"] == "1482960137.003543" and posted[0]["channel"] == "C1H9RESGL"
    assert script.calls("conversations.replies")[0].url.params["include_all_metadata"] == "true"


def test_missing_client_or_thread_is_a_clear_error():
    with pytest.raises(ConfigError, match="LINEAR_API_KEY"):
        TicketChannel(ticket_sources()).post(LINEAR_TICKET, "x")
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN"):
        TicketChannel(ticket_sources()).post(SLACK_TICKET, "x")
    slack = SlackClient("https://slack.test/api", "xoxb-x", transport=Script({}).transport())
    broken = SLACK_TICKET.model_copy(update={"thread_ts": None})
    with pytest.raises(InputError, match="thread_ts"):
        TicketChannel(ticket_sources([SlackTicketSource(slack)])).post(broken, "x")
