"""``pr_feedback``: PRs learned from ``pull_request`` materializations in the instance; a new
human comment requests exactly one ``feedback`` run for that partition; bots are ignored."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import ClassVar

import dagster as dg
import httpx
import pytest

from tests.domain.conftest import FakeForge
from tests.support.sensor_instance import ticket_job
from veranda_dagster.domain.core.bounds import MAX_FEEDBACK_PRS_PER_TICK
from veranda_dagster.domain.core.forge_port import BOT_MARKER, Comment
from veranda_dagster.domain.deliver.progress import comments_digest
from veranda_dagster.forges.github.client import GitHubClient
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.resources.forge import ForgeResource
from veranda_dagster.sensors.pr_feedback import (
    FeedbackCursor,
    poll_pr_feedback,
    pr_feedback,
    ticket_order,
)


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def warning(self, text: str) -> None:
        self.lines.append(text)


def materialize(instance, asset: str, key: str, **metadata) -> None:
    instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key=asset, partition=key, metadata=metadata)
    )


def test_a_new_human_comment_requests_one_feedback_run():
    instance = dg.DagsterInstance.ephemeral()
    materialize(
        instance, "pull_request", "ENG-7",
        pr_url=dg.MetadataValue.url("https://github.com/acme/app/pull/101"), pr_number=101,
    )  # fmt: skip
    forge = FakeForge(
        comments=[
            Comment("c5", "alice", "please rename"),
            Comment("c6", "veranda", f"done {BOT_MARKER}", by_self=True),
            Comment("c9", "codecov", "report", bot_author=True),
        ]
    )
    result = poll_pr_feedback(instance, forge, None, Log())
    (request,) = result.run_requests
    assert request.partition_key == "ENG-7"
    assert request.run_key == f"ENG-7:feedback:{comments_digest(['c5'])}"
    assert request.asset_selection == [dg.AssetKey("feedback")]
    assert request.tags[TICKET_TAG] == "ENG-7"
    cursor = FeedbackCursor.parse(result.cursor)
    assert cursor.prs["ENG-7"].repo == "acme/app" and cursor.prs["ENG-7"].seen == ["c5"]
    # the same comments next tick: nothing; a new review comment: one more run
    again = poll_pr_feedback(instance, forge, result.cursor, Log())
    assert again.run_requests == []
    forge.comments.append(Comment("c7", "bob", "nit", "t1", path="app/text.py", line=3))
    third = poll_pr_feedback(instance, forge, again.cursor, Log())
    assert [r.run_key for r in third.run_requests] == [
        f"ENG-7:feedback:{comments_digest(['c5', 'c7'])}"
    ]
    # a person's comment deleted: nothing to ask for, and the cursor forgets its id
    forge.comments.remove(forge.comments[0])
    fourth = poll_pr_feedback(instance, forge, third.cursor, Log())
    assert fourth.run_requests == [] and FeedbackCursor.parse(fourth.cursor).prs["ENG-7"].seen == [
        "c7"
    ]
    # feedback reached its bound: the PR is no longer polled
    materialize(instance, "feedback", "ENG-7", outcome="bound_reached")
    forge.comments.append(Comment("c50", "alice", "again?"))
    done = poll_pr_feedback(instance, forge, fourth.cursor, Log())
    assert done.run_requests == [] and "no ticket pull requests" in done.skip_reason.skip_message


def test_a_pr_whose_ticket_run_is_still_going_waits_and_keeps_its_comments():
    """A feedback run beside the ticket's own run would be refused as a twin, and its
    comments marked seen; the PR is passed over until that run has ended."""
    instance = dg.DagsterInstance.ephemeral()
    materialize(
        instance, "pull_request", "ENG-9",
        pr_url=dg.MetadataValue.url("https://github.com/acme/app/pull/102"), pr_number=102,
    )  # fmt: skip
    run = instance.create_run_for_job(
        ticket_job, tags={TICKET_TAG: "ENG-9"}, status=dg.DagsterRunStatus.STARTED
    )
    forge = FakeForge(comments=[Comment("c5", "alice", "please rename")])
    busy = poll_pr_feedback(instance, forge, None, Log())
    assert busy.run_requests == []
    assert FeedbackCursor.parse(busy.cursor).prs["ENG-9"].seen == []
    instance.report_run_failed(run)  # ended (how does not matter): the comment is asked for
    after = poll_pr_feedback(instance, forge, busy.cursor, Log())
    assert [r.run_key for r in after.run_requests] == [f"ENG-9:feedback:{comments_digest(['c5'])}"]


def test_a_cursor_from_before_one_comment_id_space_asks_once_more_and_then_holds_ids():
    """Old cursors held two numeric high-water marks; they cannot be compared with ids, so
    each watched PR with human comments gets one more run (the feedback phase answers only
    what it has not handled) and the cursor holds ids from then on."""
    instance = dg.DagsterInstance.ephemeral()
    materialize(
        instance, "pull_request", "ENG-4",
        pr_url=dg.MetadataValue.url("https://github.com/acme/app/pull/104"), pr_number=104,
    )  # fmt: skip
    forge = FakeForge(comments=[Comment("issue:5", "alice", "please rename")])
    learned = FeedbackCursor.parse(poll_pr_feedback(instance, forge, None, Log()).cursor)
    old = json.loads(learned.dump())
    old["prs"]["ENG-4"]["seen"] = [0, 5]
    first = poll_pr_feedback(instance, forge, json.dumps(old), Log())
    assert len(first.run_requests) == 1
    assert FeedbackCursor.parse(first.cursor).prs["ENG-4"].seen == ["issue:5"]
    assert poll_pr_feedback(instance, forge, first.cursor, Log()).run_requests == []


@pytest.mark.parametrize(
    ("forge", "variable"), [("github", "GITHUB_TOKEN"), ("gitlab", "GITLAB_TOKEN")]
)
def test_skips_with_a_reason_naming_the_forge_token_when_not_configured(forge, variable):
    context = dg.build_sensor_context(
        instance=dg.DagsterInstance.ephemeral(), resources={"forge": ForgeResource(forge=forge)}
    )
    result = pr_feedback(context)
    assert isinstance(result, dg.SkipReason) and variable in result.skip_message


class ScriptedGitHub(ForgeResource):
    """The GitHub row's real client over a recorded transport."""

    handlers: ClassVar[dict[str, Callable[[httpx.Request], httpx.Response]]] = {}

    def client(self) -> GitHubClient:
        return GitHubClient(
            self.api_url, self.token, transport=httpx.MockTransport(self.handlers["h"])
        )


def test_the_sensor_end_to_end_through_the_github_client():
    instance = dg.DagsterInstance.ephemeral()
    materialize(
        instance, "pull_request", "ENG-8",
        pr_url=dg.MetadataValue.url("https://github.com/acme/api/pull/12"), pr_number=12,
    )  # fmt: skip
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path == "/user":
            return httpx.Response(200, json={"login": "veranda-bot", "id": 5, "type": "User"})
        if request.url.path == "/repos/acme/api/issues/12/comments":
            return httpx.Response(
                200, json=[{"id": 77, "body": "why?", "user": {"login": "dev", "type": "User"}}]
            )
        return httpx.Response(200, json=[])

    ScriptedGitHub.handlers["h"] = handler
    resource = ScriptedGitHub(token="ghs_x", api_url="https://api.github.test")
    context = dg.build_sensor_context(instance=instance, resources={"forge": resource})
    result = pr_feedback(context)
    assert [r.run_key for r in result.run_requests] == [
        f"ENG-8:feedback:{comments_digest(['issue:77'])}"
    ]
    assert sorted(seen) == [
        "/repos/acme/api/issues/12/comments",
        "/repos/acme/api/pulls/12/comments",
        "/user",
    ]
    assert json.loads(result.cursor)["prs"]["ENG-8"]["number"] == 12


class PollRecorder:
    """A forge with no comments that records which PR each poll asked about."""

    def __init__(self) -> None:
        self.polled: list[int] = []

    def list_comments(self, repo, number):
        self.polled.append(number)
        return []


def _watch(instance, numbers) -> None:
    for n in numbers:
        materialize(
            instance, "pull_request", f"ENG-{n}",
            pr_url=dg.MetadataValue.url(f"https://github.com/acme/app/pull/{n}"), pr_number=n,
        )  # fmt: skip


@pytest.mark.parametrize("watched", [1, 25, 30, 60, 99])
def test_every_watched_pr_is_polled_within_its_share_of_ticks(watched):
    instance = dg.DagsterInstance.ephemeral()
    _watch(instance, range(1, watched + 1))
    forge, raw = PollRecorder(), None
    ticks = math.ceil(watched / MAX_FEEDBACK_PRS_PER_TICK)
    per_tick = []
    for _ in range(ticks):
        before = len(forge.polled)
        raw = poll_pr_feedback(instance, forge, raw, Log()).cursor
        per_tick.append(forge.polled[before:])
    assert set(forge.polled) == set(range(1, watched + 1))  # none starved
    assert all(len(t) == min(watched, MAX_FEEDBACK_PRS_PER_TICK) for t in per_tick)
    # numeric order of ticket numbers (ENG-5 before ENG-30), each tick going on from the last
    # and wrapping around to ENG-1 once it reaches the end
    flat = [n for tick in per_tick for n in tick]
    expected = [(i % watched) + 1 for i in range(len(flat))]
    assert flat == expected


def test_a_finished_pr_is_forgotten_and_the_cursor_stays_bounded(monkeypatch):
    from veranda_dagster.sensors import pr_feedback as module

    instance = dg.DagsterInstance.ephemeral()
    _watch(instance, [1, 2, 3])
    forge = PollRecorder()
    raw = poll_pr_feedback(instance, forge, None, Log()).cursor
    materialize(instance, "feedback", "ENG-2", outcome="bound_reached")
    raw = poll_pr_feedback(instance, forge, raw, Log()).cursor
    assert set(FeedbackCursor.parse(raw).prs) == {"ENG-1", "ENG-3"}
    monkeypatch.setattr(module, "MAX_WATCHED_PRS", 3)
    _watch(instance, [4, 5])
    cursor = FeedbackCursor.parse(poll_pr_feedback(instance, forge, raw, Log()).cursor)
    assert list(cursor.prs) == ["ENG-3", "ENG-4", "ENG-5"]  # the earliest learned went first
    assert cursor.done == []


def test_ticket_order_is_numeric():
    keys = ["ENG-30", "ENG-5", "API-2", "ENG-100", "slack-C1-1712.5"]
    assert sorted(keys, key=ticket_order) == [
        "API-2", "ENG-5", "ENG-30", "ENG-100", "slack-C1-1712.5"
    ]  # fmt: skip


def test_on_gitlab_a_merge_request_in_a_subgroup_is_watched_through_the_forge_resource():
    """The sensor reads MR URLs with the chosen forge's row: a GitLab MR in a subgroup is
    learned (a GitHub PR URL is not this forge's), and a new note requests one run."""
    from tests.support.resources import forge_returning

    instance = dg.DagsterInstance.ephemeral()
    materialize(
        instance, "pull_request", "jira-PAY-17",
        pr_url=dg.MetadataValue.url("https://gitlab.example/acme/platform/api/-/merge_requests/7"),
        pr_number=7,
    )  # fmt: skip
    materialize(
        instance, "pull_request", "ENG-8",
        pr_url=dg.MetadataValue.url("https://github.com/acme/app/pull/3"), pr_number=3,
    )  # fmt: skip
    fake = FakeForge(comments=[Comment("note:11", "alice", "please add a test")])
    fake.close = lambda: None  # type: ignore[attr-defined]
    forge = forge_returning(
        fake, forge="gitlab", token="glpat-fake", git_base="https://gitlab.example"
    )
    result = pr_feedback(dg.build_sensor_context(instance=instance, resources={"forge": forge}))
    assert isinstance(result, dg.SensorResult)
    assert [r.run_key for r in result.run_requests] == [
        f"jira-PAY-17:feedback:{comments_digest(['note:11'])}"
    ]
    cursor = FeedbackCursor.parse(result.cursor)
    assert cursor.prs["jira-PAY-17"].repo == "acme/platform/api" and "ENG-8" not in cursor.prs


class HostileForThe101:
    """A forge whose answer for PR 101 is over the byte cap; PR 102 answers normally."""

    def __init__(self) -> None:
        self.comments = {102: [Comment("c1", "bob", "rename it")]}

    def list_comments(self, repo, number):
        from veranda_dagster.http.bounded import MAX_RESPONSE_BYTES, ResponseTooLargeError

        if number == 101:
            raise ResponseTooLargeError(f"github GET ...: answer is over {MAX_RESPONSE_BYTES}")
        return list(self.comments[number])


def test_a_hostile_answer_for_one_pr_skips_that_pr_only_and_keeps_what_it_had_seen():
    instance = dg.DagsterInstance.ephemeral()
    for key, number in (("ENG-1", 101), ("ENG-2", 102)):
        materialize(
            instance, "pull_request", key,
            pr_url=dg.MetadataValue.url(f"https://github.com/acme/app/pull/{number}"),
            pr_number=number,
        )  # fmt: skip
    seen = FakeForge(comments=[Comment("c0", "ann", "earlier")])
    first = FeedbackCursor.parse(poll_pr_feedback(instance, seen, None, Log()).cursor)
    assert first.prs["ENG-1"].seen == ["c0"]
    log = Log()
    result = poll_pr_feedback(instance, HostileForThe101(), first.dump(), log)
    assert [r.partition_key for r in result.run_requests] == ["ENG-2"]
    assert FeedbackCursor.parse(result.cursor).prs["ENG-1"].seen == ["c0"]  # nothing lost
    assert any("ENG-1" in line and "over" in line for line in log.lines)


def test_a_listing_cut_at_its_bound_is_said_in_the_sensor_log():
    from veranda_dagster.domain.core.forge_port import Comments

    class Cut:
        def list_comments(self, repo, number):
            return Comments([Comment("c1", "bob", "x")], truncated="github ...: skipped 3 pages")

    instance = dg.DagsterInstance.ephemeral()
    materialize(
        instance, "pull_request", "ENG-3",
        pr_url=dg.MetadataValue.url("https://github.com/acme/app/pull/103"), pr_number=103,
    )  # fmt: skip
    log = Log()
    poll_pr_feedback(instance, Cut(), None, log)
    assert any("skipped 3 pages" in line for line in log.lines)
