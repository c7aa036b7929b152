"""``linear_tickets`` against an HTTP-level fake of Linear, with a real (test) Dagster instance.

``launch`` (``tests/support/sensor_instance.py``) plays the daemon. Counting runs per ticket tag
in the instance is the "no duplicate run" assertion; the tickets that must eventually have a
run are the "no lost ticket" assertion.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import ClassVar

import dagster as dg
import pytest

from tests.sources.linear.test_linear_client import Script, reply, variables
from tests.support.sensor_instance import keys_of, launch, runs_per_ticket
from veranda_dagster.http.client import HttpAuthError
from veranda_dagster.partitions import TICKET_JOB, TICKET_TAG, TICKETS
from veranda_dagster.sources.linear.client import LinearClient
from veranda_dagster.sources.linear.limits import MAX_LINEAR_PAGES_PER_TICK
from veranda_dagster.sources.linear.resource import LinearResource
from veranda_dagster.sources.linear.sensor import linear_tickets


class ScriptedLinear(LinearResource):
    """The real resource with its client pointed at a Script (by id: resources are config)."""

    scripts: ClassVar[dict[str, tuple[Script, list[float]]]] = {}
    script_id: str = "default"

    def client(self) -> LinearClient:
        script, slept = self.scripts[self.script_id]
        return LinearClient(
            "https://linear.test/graphql",
            self.api_key,
            transport=script.transport(),
            sleep=slept.append,
            bot_user_id=self.bot_user_id,
            label=self.label,
        )


def tick(instance, script: Script, cursor: str | None = None, slept: list[float] | None = None):
    ScriptedLinear.scripts["default"] = (script, slept if slept is not None else [])
    resource = ScriptedLinear(api_key="lin_api_test", bot_user_id="u-bot")
    context = dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"linear": resource}
    )
    return linear_tickets(context)


def pages(*names: str) -> Script:
    return Script({"PollIssues": [reply(f"linear/{n}.json") for n in names]})


def test_no_key_configured_skips_with_the_env_var_named(instance):
    context = dg.build_sensor_context(instance=instance, resources={"linear": LinearResource()})
    result = linear_tickets(context)
    assert isinstance(result, dg.SkipReason) and "LINEAR_API_KEY" in result.skip_message


def test_from_env_binds_the_key_only_when_set(monkeypatch):
    monkeypatch.delenv("LINEAR_API_KEY", raising=False)
    assert not LinearResource.from_env().configured
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_x")
    monkeypatch.setenv("LINEAR_BOT_USER_ID", "u-bot")
    resource = LinearResource.from_env()
    assert resource.bot_user_id == "u-bot"


def test_pagination_adds_partitions_and_one_run_per_ticket(instance):
    script = pages("poll_page1", "poll_page2")
    result = tick(instance, script)
    assert keys_of(result) == ["ENG-1", "ENG-2", "ENG-3"]
    (add,) = result.dynamic_partitions_requests
    assert add.partitions_def_name == TICKETS.name and list(add.partition_keys) == keys_of(result)
    first = result.run_requests[0]
    assert first.run_key == "ENG-1" and first.tags == {
        TICKET_TAG: "ENG-1",
        "veranda/ticket-run": "1",
    }
    assert variables(script.requests[1])["after"] == "Y3Vyc29yLTE="
    cursor = json.loads(result.cursor)
    assert cursor["since"] == "2026-08-01T10:07:25.000Z"  # max updatedAt minus the overlap
    # Only items inside the overlap window are remembered; older ones are outside the filter.
    assert cursor["after"] is None and cursor["recent"] == {"ENG-3": "2026-08-01T10:07:30.000Z"}


def test_cursor_advance_asks_only_for_changes_and_skips_the_overlap(instance):
    first = tick(instance, pages("poll_page1", "poll_page2"))
    launch(instance, first)
    script = pages("poll_after_advance")
    second = tick(instance, script, cursor=first.cursor)
    assert variables(script.requests[0])["filter"]["updatedAt"] == {
        "gt": "2026-08-01T10:07:25.000Z"
    }
    assert keys_of(second) == ["ENG-4"]
    launch(instance, second)
    assert json.loads(second.cursor)["since"] == "2026-08-01T10:59:55.000Z"
    assert runs_per_ticket(instance) == Counter({"ENG-1": 1, "ENG-2": 1, "ENG-3": 1, "ENG-4": 1})


def test_an_edited_issue_seen_again_yields_no_second_run(instance):
    first = tick(instance, pages("poll_page1", "poll_page2"))
    launch(instance, first)
    again = tick(instance, pages("poll_updated_again"), cursor=first.cursor)
    assert keys_of(again) == [] and not again.dynamic_partitions_requests
    assert json.loads(again.cursor)["since"] == "2026-08-01T11:59:55.000Z"
    assert runs_per_ticket(instance)["ENG-1"] == 1


def test_429_with_retry_after_waits_then_takes_every_ticket(instance):
    script = Script(
        {
            "PollIssues": [
                reply("linear/error_ratelimited.json", 429, {"retry-after": "5"}),
                reply("linear/poll_page1.json"),
                reply("linear/poll_page2.json"),
            ]
        }
    )
    slept: list[float] = []
    result = tick(instance, script, slept=slept)
    assert slept == [5.0]
    assert keys_of(result) == ["ENG-1", "ENG-2", "ENG-3"]


def test_429_past_its_bound_skips_and_keeps_the_cursor_so_nothing_is_lost(instance):
    start = json.dumps({"since": "2026-08-01T09:00:00.000Z"})
    limited = Script(
        {"PollIssues": [reply("linear/error_ratelimited.json", 429, {"retry-after": "120"})]}
    )
    slept: list[float] = []
    skipped = tick(instance, limited, cursor=start, slept=slept)
    assert isinstance(skipped, dg.SkipReason) and "cursor kept" in skipped.skip_message
    assert slept == []  # 120 s is past the in-line bound: no sleeping inside a tick
    # Dagster keeps the stored cursor on a SkipReason; the next tick starts from ``start``.
    script = pages("poll_page1", "poll_page2")
    recovered = tick(instance, script, cursor=start)
    assert variables(script.requests[0])["filter"]["updatedAt"] == {
        "gt": "2026-08-01T09:00:00.000Z"
    }
    launch(instance, recovered)
    assert runs_per_ticket(instance) == Counter({"ENG-1": 1, "ENG-2": 1, "ENG-3": 1})


@pytest.mark.parametrize("fixture", ["error_authentication", None])
def test_auth_failure_raises_a_typed_error_and_requests_nothing(instance, fixture):
    bad = reply(f"linear/{fixture}.json") if fixture else reply(body="{}", status=401)
    with pytest.raises(HttpAuthError, match="LINEAR_API_KEY"):
        tick(instance, Script({"PollIssues": [bad]}))
    assert len(instance.get_runs()) == 0


def test_malformed_page_keeps_the_cursor_and_recovers_without_duplicates(instance):
    start = json.dumps({"since": "2026-08-01T09:00:00.000Z"})
    broken = Script(
        {"PollIssues": [reply("linear/poll_page1.json"), reply("linear/malformed_nodes.json")]}
    )
    partial = tick(instance, broken, cursor=start)
    assert keys_of(partial) == ["ENG-1", "ENG-2"]  # what was read is taken ...
    assert json.loads(partial.cursor) == json.loads(
        '{"since": "2026-08-01T09:00:00.000Z", "after": null, "pending": null, "recent": {}}'
    )  # ... but the mark does not move past the unread page
    launch(instance, partial)
    fixed = tick(instance, pages("poll_page1", "poll_page2"), cursor=partial.cursor)
    assert keys_of(fixed) == ["ENG-3"]
    launch(instance, fixed)
    assert runs_per_ticket(instance) == Counter({"ENG-1": 1, "ENG-2": 1, "ENG-3": 1})


def test_issue_without_identifier_is_skipped_and_the_rest_taken(instance):
    result = tick(instance, pages("poll_bad_node"))
    assert keys_of(result) == ["ENG-5"]


def test_walk_cut_by_the_page_bound_resumes_from_the_page_cursor(instance):
    script = pages("poll_more")
    first = tick(instance, script, cursor=json.dumps({"since": "2026-07-01T00:00:00.000Z"}))
    assert len(script.requests) == MAX_LINEAR_PAGES_PER_TICK
    cursor = json.loads(first.cursor)
    assert cursor["since"] == "2026-07-01T00:00:00.000Z"  # not advanced: the walk is unfinished
    assert cursor["after"] == "bW9yZQ==" and cursor["pending"] == "2026-08-01T09:00:00.000Z"
    launch(instance, first)
    rest = pages("poll_page2")
    done = tick(instance, rest, cursor=first.cursor)
    assert variables(rest.requests[0])["after"] == "bW9yZQ=="
    assert keys_of(done) == ["ENG-3"]
    assert json.loads(done.cursor)["since"] == "2026-08-01T10:07:25.000Z"
    assert json.loads(done.cursor)["after"] is None


def test_restart_with_a_lost_cursor_yields_no_second_run(instance):
    first = tick(instance, pages("poll_page1", "poll_page2"))
    launch(instance, first)
    # A new sensor context (new process, cursor lost) against the same instance.
    restarted = tick(instance, pages("poll_page1", "poll_page2"), cursor=None)
    assert keys_of(restarted) == [] and not restarted.dynamic_partitions_requests
    assert runs_per_ticket(instance) == Counter({"ENG-1": 1, "ENG-2": 1, "ENG-3": 1})


def test_a_bad_stored_cursor_is_a_typed_error(instance):
    from veranda_dagster.domain.core.errors import InputError

    with pytest.raises(InputError, match="cursor"):
        tick(instance, pages("poll_empty"), cursor="{not json")


def test_sensors_load_in_definitions_with_a_partitioned_ticket_job(monkeypatch):
    from veranda_dagster.sources.slack.sensor import SlackResource, slack_mentions

    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_x")
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)

    @dg.asset(partitions_def=TICKETS)
    def ticket() -> None:
        return None

    job = dg.define_asset_job(TICKET_JOB, selection=[ticket])
    defs = dg.Definitions(
        assets=[ticket],
        jobs=[job],
        sensors=[linear_tickets, slack_mentions],
        resources={"linear": LinearResource.from_env(), "slack": SlackResource.from_env()},
    )
    dg.Definitions.validate_loadable(defs)
    assert linear_tickets.minimum_interval_seconds == 60


def test_cursor_memory_is_trimmed_to_the_window_and_the_bound():
    from veranda_dagster.domain.core.bounds import MAX_CURSOR_RECENT
    from veranda_dagster.sources.linear.sensor import _trim

    recent = {f"ENG-{i}": f"2026-08-01T10:{i // 60:02d}:{i % 60:02d}.000Z" for i in range(400)}
    kept = _trim(recent, None)
    assert len(kept) == MAX_CURSOR_RECENT and "ENG-399" in kept and "ENG-0" not in kept
    assert set(_trim(recent, "2026-08-01T10:06:38.000Z")) == {"ENG-399"}
