"""``jira_tickets`` against the loopback Jira fake, with a real (test) Dagster instance.

``launch`` (from the Linear sensor tests) plays the daemon, so each tick's dedup sees what
production would: the cursor, dedup across a restart (cursor lost, instance kept), and our own
comments never relaunching a failed ticket while a person's comment does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from tests.support.sensor_instance import launch, runs_per_ticket, ticket_job
from veranda_dagster.partitions import TICKET_TAG
from veranda_dagster.resources.sources_enabled import enabled_sources
from veranda_dagster.sim.jira_fake import JiraFake
from veranda_dagster.sources.jira.client import JiraClient
from veranda_dagster.sources.jira.resource import JiraResource
from veranda_dagster.sources.jira.sensor import (
    JiraCursor,
    jira_tickets,
    poll_jira,
    relative_since,
)
from veranda_dagster.sources.jira.ticket import partition_key as jira_partition_key
from veranda_dagster.sources.registry import listed_sensors

TOKEN = "ATATT3xFfGF0-fake-jira-token"


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, msg: str) -> None:
        self.lines.append(msg)

    warning = info


@pytest.fixture
def world():
    clock = [datetime(2026, 12, 3, 6, 0, tzinfo=UTC)]
    with JiraFake(TOKEN, clock=lambda: clock[0], page_cap=1) as fake:
        jira = JiraClient(
            fake.base_url, TOKEN, email=fake.email, label="veranda", sleep=lambda s: None
        )
        yield fake, jira, clock


def tick(instance, jira, cursor, clock, log=None):
    result = poll_jira(instance, jira, cursor, log or Log(), now=lambda: clock[0])
    if isinstance(result, dg.SensorResult):
        launch(instance, result)
    return result


def keys(result) -> list[str]:
    return [r.partition_key for r in result.run_requests] if result.run_requests else []


def test_cursor_restart_and_own_comments(instance, world):
    fake, jira, clock = world
    fake.file_issue("PAY-1", "Rounding", labels=["veranda"])
    fake.file_issue("PAY-2", "Export", labels=["veranda"])
    fake.file_issue("PAY-3", "Not ours", labels=["web"])

    first = tick(instance, jira, None, clock)
    assert keys(first) == ["jira-PAY-1", "jira-PAY-2"]  # source-qualified keys
    cursor = first.cursor
    assert JiraCursor.parse(cursor).since == "2026-12-03T06:00:00.000+00:00"

    clock[0] += timedelta(minutes=30)
    again = tick(instance, jira, cursor, clock)
    assert keys(again) == []
    jql = fake.requests_to("/rest/api/3/search/jql")[-1].query["jql"][0]
    assert 'updated >= "-31m"' in jql  # relative: independent of the account's time zone

    restarted = tick(instance, jira, None, clock)  # cursor lost, instance kept
    assert keys(restarted) == []
    assert runs_per_ticket(instance) == {"jira-PAY-1": 1, "jira-PAY-2": 1}

    # PAY-1's run fails before materializing anything, and we post the failed-run note.
    for run in instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: "jira-PAY-1"})):
        instance.delete_run(run.run_id)
    instance.create_run_for_job(
        ticket_job, tags={TICKET_TAG: "jira-PAY-1"}, status=dg.DagsterRunStatus.FAILURE
    )
    clock[0] += timedelta(minutes=1)
    jira.post_once("PAY-1", "The run failed: tests did not pass.", "veranda:1111222233334444")
    log = Log()
    ours = tick(instance, jira, restarted.cursor, clock, log)
    assert keys(ours) == []
    assert any("only by our own comment" in line for line in log.lines)

    clock[0] += timedelta(minutes=1)
    fake.add_comment("PAY-1", "Please try again, the flaky test is fixed.")
    retried = tick(instance, jira, ours.cursor, clock)
    assert keys(retried) == ["jira-PAY-1"]


def test_new_issue_after_the_mark_and_a_failed_poll_keeps_the_cursor(instance, world):
    fake, jira, clock = world
    fake.file_issue("PAY-1", "Rounding", labels=["veranda"])
    first = tick(instance, jira, None, clock)
    clock[0] += timedelta(minutes=5)
    fake.file_issue("PAY-7", "New", labels=["veranda"])
    second = tick(instance, jira, first.cursor, clock)
    assert keys(second) == ["jira-PAY-7"]

    fake.fail_next("/rest/api/3/search/jql", 503, times=10)
    failed = poll_jira(instance, jira, second.cursor, Log(), now=lambda: clock[0])
    assert isinstance(failed, dg.SkipReason) and "cursor kept" in str(failed.skip_message)


def test_relative_since_and_bad_cursor():
    now = datetime(2026, 12, 3, 6, 0, 30, tzinfo=UTC)
    assert relative_since("2026-12-03T05:59:00.000+00:00", now) == "-3m"
    assert relative_since(None, now) is None
    with pytest.raises(Exception, match="not valid JSON"):
        JiraCursor.parse("{not json")
    assert jira_partition_key("PAY-17") != "PAY-17"


def test_registration_is_off_by_default_and_skips_unconfigured():
    def jira_intake(environ: dict[str, str]) -> list[dg.SensorDefinition]:
        return [s for s in listed_sensors(enabled_sources(environ)) if s is jira_tickets]

    assert jira_intake({}) == []
    assert jira_intake({"VERANDA_JIRA_INTAKE": "1"}) == [jira_tickets]  # the older switch
    assert jira_intake({"VERANDA_SOURCES": "linear,jira"}) == [jira_tickets]
    assert jira_intake({"VERANDA_SOURCES": "linear,slack"}) == []
    assert jira_tickets.default_status == dg.DefaultSensorStatus.STOPPED
    with dg.instance_for_test() as inst:
        context = dg.build_sensor_context(instance=inst, resources={"jira": JiraResource()})
        result = jira_tickets(context)
        assert isinstance(result, dg.SkipReason) and "not configured" in str(result.skip_message)
