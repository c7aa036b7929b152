"""One deployment, two orgs run differently: a Jira ticket goes to ``acme-data`` on GitLab and a
Linear ticket to ``acme`` on GitHub, each configured only by the orgs file (``VERANDA_ORGS``).

Both orgs have a ``billing`` repository; which one a ticket lands in follows from its source
(``acme-data`` takes Jira tickets, ``acme`` Linear and Slack ones) and its text. Each run opens
its one request on its own org's forge, with that org's token, and nothing on the other.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import step_failures
from veranda_dagster.sim.driver import SensorDriver, run_tags, run_ticket_process
from veranda_dagster.sim.sample_org import BILLING, SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.two_orgs import DATA_BILLING
from veranda_dagster.sim.world import LINEAR_LABEL, SimWorld

pytestmark = [pytest.mark.slow, pytest.mark.real_cli_slow]


def _run(world: SimWorld, instance, sensor: str) -> str:
    (request,) = SensorDriver().tick(instance, sensor)
    run_id, ok = run_ticket_process(run_tags(request), world.env)
    assert ok, step_failures(instance, run_id)
    for fake in (world.github, world.gitlab):
        fake.ci.wait_idle(timeout=30)
    assert request.partition_key is not None
    return request.partition_key


@pytest.mark.parametrize("world", [{"tickets": "jira", "two_orgs": True}], indirect=True)
def test_each_org_takes_its_own_tickets_on_its_own_forge(world: SimWorld, instance) -> None:
    body = SAMPLE_TICKET_BODY.replace(BILLING, DATA_BILLING)
    key = world.file_ticket(SAMPLE_TICKET_TITLE, body)
    assert _run(world, instance, world.sensor) == key
    (mr,) = world.pull_requests("gitlab")
    assert mr["repo"] == DATA_BILLING and "/-/merge_requests/1" in mr["url"]
    assert world.pull_requests("github") == []

    world.linear.file_ticket(SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY, labels=[LINEAR_LABEL])
    assert _run(world, instance, "linear_tickets") == "ENG-101"
    (pr,) = world.pull_requests("github")
    assert pr["repo"] == BILLING and "/pull/1" in pr["url"]
    assert len(world.pull_requests("gitlab")) == 1
