"""A signed Linear webhook posted to the running receiver starts the ticket's run, once."""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any, cast

import dagster as dg
import pytest
from dagster._core.storage.tags import PARTITION_NAME_TAG, RUN_KEY_TAG, SENSOR_NAME_TAG

from tests.sources.push.conftest import SECRETS, Receiver
from veranda_dagster.partitions import TICKET_JOB, TICKET_TAG, TICKETS_NAME
from veranda_dagster.sources.linear.client import LinearClient
from veranda_dagster.sources.linear.sensor import poll_linear
from veranda_dagster.sources.push_launch import PUSH_TAG
from veranda_dagster.sources.webhook_auth import (
    LINEAR_MAX_SKEW_S,
    MAX_WEBHOOK_BODY_BYTES,
    sign_linear,
)

PUSH_TO_RUN_BOUND_S = 5.0
"""A verified event's run exists this soon after the POST (the target is ~1-2 s; loose for a
loaded 2-core machine)."""


def linear_body(
    key: str,
    *,
    stamp_ms: float | None = None,
    webhook_id: str = "wh-1",
    assignee: str | None = "bot-1",
    labels: tuple[str, ...] = (),
) -> bytes:
    return json.dumps(
        {
            "action": "create",
            "type": "Issue",
            "data": {
                "identifier": key,
                "assigneeId": assignee,
                "labels": [{"id": f"l{i}", "name": n} for i, n in enumerate(labels)],
                "state": {"type": "unstarted"},
            },
            "webhookId": webhook_id,
            "webhookTimestamp": int(time.time() * 1000 if stamp_ms is None else stamp_ms),
        }
    ).encode()


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def post_linear(push: Receiver, body: bytes, **extra: str) -> tuple[int, dict[str, Any]]:
    headers = {**sign_linear(SECRETS["linear"], body), "Content-Type": "application/json"}
    return post(f"{push.url}/webhooks/linear", body, {**headers, **extra})


def runs_of(instance: dg.DagsterInstance, key: str) -> list[dg.DagsterRun]:
    return list(instance.get_runs(filters=dg.RunsFilter(tags={TICKET_TAG: key})))


def test_a_signed_webhook_creates_the_tickets_run_with_its_partition_and_tags(
    push: Receiver,
) -> None:
    started = time.monotonic()
    status, answer = post_linear(push, linear_body("ENG-701"))
    elapsed = time.monotonic() - started
    assert (status, answer["outcome"]) == (201, "run created"), answer
    assert elapsed < PUSH_TO_RUN_BOUND_S
    [run] = runs_of(push.instance, "ENG-701")
    assert run.run_id == answer["run_id"]
    assert run.job_name == TICKET_JOB
    assert run.status == dg.DagsterRunStatus.QUEUED  # submitted: the daemon's queue launches it
    assert run.tags[PARTITION_NAME_TAG] == "ENG-701"
    assert run.tags[RUN_KEY_TAG] == "ENG-701"
    assert run.tags[SENSOR_NAME_TAG] == "linear_tickets"
    assert run.tags["veranda/ticket-run"] == "1"
    assert run.tags[PUSH_TAG] == "push"
    assert push.instance.has_dynamic_partition(TICKETS_NAME, "ENG-701")


def test_a_labelled_issue_is_taken_and_an_unscoped_one_left_to_the_poll(push: Receiver) -> None:
    labelled = linear_body("ENG-702", assignee=None, labels=("Veranda",), webhook_id="a")
    assert post_linear(push, labelled)[0] == 201
    status, answer = post_linear(push, linear_body("ENG-703", assignee="someone", webhook_id="b"))
    assert (status, answer["outcome"]) == (202, "ignored")
    assert "left to the poll" in answer["detail"]
    assert runs_of(push.instance, "ENG-703") == []


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        ({"Linear-Signature": "0" * 64}, linear_body("ENG-710"), 401),
        ({}, linear_body("ENG-710"), 401),
        (None, linear_body("ENG-710", stamp_ms=(time.time() - LINEAR_MAX_SKEW_S - 5) * 1000), 401),
        (None, b"not json at all", 400),
    ],
    ids=["bad-signature", "no-signature", "stale-timestamp", "signed-but-not-json"],
)
def test_a_bad_request_is_refused_and_starts_nothing(
    push: Receiver, headers: dict[str, str] | None, body: bytes, status: int
) -> None:
    sent = sign_linear(SECRETS["linear"], body) if headers is None else headers
    got, answer = post(f"{push.url}/webhooks/linear", body, sent)
    assert got == status, answer
    assert runs_of(push.instance, "ENG-710") == []
    assert SECRETS["linear"] not in json.dumps(answer)


def test_an_oversize_body_is_refused_413_before_it_is_read(push: Receiver) -> None:
    body = b"{" + b" " * MAX_WEBHOOK_BODY_BYTES + b"}"
    status, answer = post_linear(push, body)
    assert status == 413, answer


def test_a_replay_and_a_second_event_of_the_same_ticket_start_no_second_run(
    push: Receiver,
) -> None:
    body = linear_body("ENG-720", webhook_id="same")
    assert post_linear(push, body)[0] == 201
    status, answer = post_linear(push, body)  # the same delivery again
    assert (status, answer["outcome"]) == (200, "duplicate delivery")
    push.receiver._seen.clear()  # a receiver restarted: only the instance remembers
    status, answer = post_linear(push, body)
    assert (status, answer["outcome"]) == (200, "held")
    other = linear_body("ENG-720", webhook_id="an-update")  # a later update of the issue
    assert post_linear(push, other)[1]["outcome"] == "held"
    assert len(runs_of(push.instance, "ENG-720")) == 1


class _OneIssue:
    """A Linear client whose one page holds the pushed issue, as the next poll would see it."""

    def __init__(self, key: str) -> None:
        self.key = key

    def iter_issue_pages(
        self, since: str | None, after: str | None
    ) -> Iterator[tuple[list[dict[str, Any]], dict[str, Any]]]:
        node = {"identifier": self.key, "updatedAt": "2026-12-05T07:00:00.000Z"}
        yield [node], {"hasNextPage": False, "endCursor": "c1"}


def test_the_poll_after_a_push_starts_no_twin(push: Receiver) -> None:
    assert post_linear(push, linear_body("ENG-730"))[0] == 201
    result = poll_linear(
        push.instance, cast(LinearClient, _OneIssue("ENG-730")), None, logging.getLogger("t")
    )
    assert isinstance(result, dg.SensorResult)
    assert result.run_requests == []
    assert len(runs_of(push.instance, "ENG-730")) == 1


def test_a_tick_that_raced_the_push_is_refused_by_the_daemons_run_key_check(
    push: Receiver, workspace_instance: Any
) -> None:
    """The daemon's own guard (``fetch_existing_runs``, Dagster 1.13.27) sees the pushed run
    as the sensor's run for that key, so a tick that requested it anyway creates nothing."""
    from dagster._daemon.sensor import fetch_existing_runs

    from veranda_dagster.sources.dedup import ticket_run_request

    assert post_linear(push, linear_body("ENG-740"))[0] == 201
    _, workspace = workspace_instance
    context = workspace.create_request_context()
    [entry] = context.get_code_location_entries().values()
    [repository] = entry.code_location.get_repositories().values()
    sensor = repository.get_sensor("linear_tickets")
    existing = fetch_existing_runs(push.instance, sensor, [ticket_run_request("ENG-740")])
    assert set(existing) == {"ENG-740"}


def test_a_source_without_a_secret_refuses_its_webhooks(push: Receiver) -> None:
    del push.receiver.secrets["linear"]  # type: ignore[attr-defined]
    status, answer = post_linear(push, linear_body("ENG-750"))
    assert status == 503
    assert "LINEAR_WEBHOOK_SECRET" in answer["detail"]
    assert runs_of(push.instance, "ENG-750") == []


def test_a_ticket_a_sensor_already_registered_is_left_to_the_poll(push: Receiver) -> None:
    """The sensor added the partition and the daemon is about to create its run: push must not
    make a second one; nor does it re-trigger a ticket whose run failed (the poll's rules)."""
    push.instance.add_dynamic_partitions(TICKETS_NAME, ["ENG-760"])
    status, answer = post_linear(push, linear_body("ENG-760", webhook_id="r1"))
    assert (status, answer["outcome"]) == (200, "held")
    assert "left to the poll" in answer["detail"]
    assert runs_of(push.instance, "ENG-760") == []
