"""The fake Linear delivers each ticket filed to the push receiver, signed, as Linear's workspace
webhook does (what ``veranda dev`` wires up): the run starts without a poll; an unsigned or
unassigned delivery starts none; a dead receiver never delays filing; the record is bounded."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import pytest

from tests.sources.push.conftest import SCOPE, SECRETS, Receiver
from tests.sources.push.test_linear_push import PUSH_TO_RUN_BOUND_S, runs_of
from veranda_dagster.sim import linear_fake
from veranda_dagster.sim.linear_fake import HUMAN_USER_ID, Delivery, LinearFake
from veranda_dagster.sources.push_launch import PUSH_TAG

FILE_BOUND_S = 1.0
"""Filing returns this soon whatever the receiver does (delivery runs on its own thread)."""
DELIVERY_BOUND_S = 15.0
"""Every delivery is recorded by then (each POST is bounded by WEBHOOK_POST_TIMEOUT_S)."""

BOT = SCOPE.linear_bot_user_id


@pytest.fixture
def fake() -> Iterator[LinearFake]:
    with LinearFake() as linear:
        yield linear


def _wait_for(done: Callable[[], bool], bound: float = DELIVERY_BOUND_S) -> None:
    deadline = time.monotonic() + bound
    while not done():
        assert time.monotonic() < deadline, "no delivery recorded in time"
        time.sleep(0.05)


def _delivered(fake: LinearFake, key: str) -> Delivery:
    _wait_for(lambda: any(d.key == key for d in fake.deliveries))
    return next(d for d in fake.deliveries if d.key == key)


def test_a_ticket_filed_for_the_bot_starts_its_run_through_the_receiver(
    push: Receiver, fake: LinearFake
) -> None:
    fake.deliver_webhooks(f"{push.url}/webhooks/linear", SECRETS["linear"])
    started = time.monotonic()
    key = fake.file_ticket("Fix the retry bug", "repo: acme/billing", assignee=BOT)["identifier"]
    assert _delivered(fake, key) == Delivery(key, 201)
    assert time.monotonic() - started < PUSH_TO_RUN_BOUND_S
    [run] = runs_of(push.instance, key)
    assert run.tags.get(PUSH_TAG) == "push"


def test_wrongly_signed_or_not_the_bots_deliveries_start_nothing(
    push: Receiver, fake: LinearFake
) -> None:
    """The twins: the same filing with another secret (401) or for a person (202, left to
    the poll) creates no run."""
    fake.deliver_webhooks(f"{push.url}/webhooks/linear", "not-the-secret")
    forged = fake.file_ticket("Forged", assignee=BOT)["identifier"]
    assert _delivered(fake, forged).status == 401
    fake.deliver_webhooks(f"{push.url}/webhooks/linear", SECRETS["linear"])
    human = fake.file_ticket("A person's", assignee=HUMAN_USER_ID)["identifier"]
    assert _delivered(fake, human).status == 202
    assert runs_of(push.instance, forged) == [] and runs_of(push.instance, human) == []


def _dead_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/webhooks/linear"


def test_a_dead_receiver_never_delays_filing_and_the_failure_is_recorded(
    fake: LinearFake,
) -> None:
    fake.deliver_webhooks(_dead_url(), SECRETS["linear"])
    started = time.monotonic()
    key = fake.file_ticket("Receiver down", assignee=BOT)["identifier"]
    assert time.monotonic() - started < FILE_BOUND_S
    assert fake.find(key) is not None  # the poll still finds it
    delivery = _delivered(fake, key)
    assert delivery.status is None and "Connection refused" in delivery.error


def test_the_delivery_record_keeps_only_the_newest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linear_fake, "MAX_RECORDED_DELIVERIES", 2)
    with LinearFake() as fake:
        fake.deliver_webhooks(_dead_url(), SECRETS["linear"])
        keys = []
        for title in ("one", "two", "three"):
            keys.append(fake.file_ticket(title, assignee=BOT)["identifier"])
            _delivered(fake, keys[-1])  # in order, so "the newest" is well defined
        assert [d.key for d in fake.deliveries] == keys[1:]
