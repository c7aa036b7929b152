"""Durability on the real graph: SIGKILL mid-patch, resume from failure, one run, one PR.

One world and one ticket carry the whole story, because each extra pipeline costs tens of
seconds: Linear, Slack and GitHub each answer a 429 with Retry-After on the way, the run worker
is SIGKILLed while the implementer's turn is in flight, the same ticket is delivered again
(a restarted sensor with no cursor, then an edit) and mentioned in Slack while in flight, and
the model answers one 5xx (absorbed by the CLI's own retry, as Claude Code's is). It runs with
the stand-in and, offline, with the real Claude Code.
"""

from __future__ import annotations

import pytest

from tests.e2e import offline
from tests.e2e.conftest import step_failures, step_successes
from veranda_dagster.sim.driver import (
    SensorDriver,
    instance_for,
    kill_agents_in,
    kill_run_worker,
    run_tags,
    run_ticket_process,
    spawn_ticket_run,
)
from veranda_dagster.sim.sample_org import BILLING, SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.world import SLACK_CHANNEL, SimWorld

pytestmark = pytest.mark.slow

BEFORE_PATCH = {"ticket", "repo_guess", "context_pack", "red_tests"}


def test_kill_mid_patch_resumes_without_rebilling_and_opens_one_pr(world: SimWorld, instance):
    kill_mid_patch_and_resume(world, instance)


@pytest.mark.real_cli
def test_kill_mid_patch_with_the_real_claude_code(tmp_path, request):
    """The same story with the real Claude Code doing the turns, offline: the SIGKILL lands
    while its implementer turn is in flight, and the resumed run re-bills nothing upstream."""
    offline.require_cli("claude")
    if offline.ran_offline(request):
        return
    with SimWorld(root=tmp_path / "world", agent="claude") as world:
        world.apply_env()
        with instance_for(str(world.dagster_home)) as instance:
            kill_mid_patch_and_resume(world, instance)
            assert world.model.conversation("implementer")[0].wire == "anthropic"
            assert all(c.stream for c in world.model.calls)


def kill_mid_patch_and_resume(world: SimWorld, instance) -> None:
    issue = world.linear.file_ticket(SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)
    key = issue["identifier"]
    world.linear.fail_next("/graphql", 429, retry_after=1)
    sensors = SensorDriver()
    (request,) = sensors.tick(instance, "linear_tickets")
    assert [r.status for r in world.linear.requests][:2] == [429, 200]

    arrived = world.model.block("implementer")
    worker = spawn_ticket_run(run_tags(request), world.env)
    try:
        assert arrived.wait(150), "the run never reached the implementer's turn"
        # in flight: a restarted sensor (no cursor) and a Slack mention start nothing
        assert SensorDriver().tick(instance, "linear_tickets") == []
        world.slack.fail_next("/api/conversations.history", 429, retry_after=1)
        world.slack.post_user_message(SLACK_CHANNEL, f"can you look at {key}?", mention_bot=True)
        assert sensors.tick(instance, "slack_mentions") == []
        assert any(r.status == 429 for r in world.slack.requests)
        kill_run_worker(worker)
        kill_agents_in(world.env["VERANDA_WORKSPACES"])  # the pod died: its CLI with it
    finally:
        if worker.poll() is None:
            kill_run_worker(worker)
        world.model.release("implementer")
    (first,) = instance.get_runs()
    before = world.model.calls_by_role()
    assert before["repo_confirmer"] == 1 and before["test_writer"] == 1
    assert world.github.all_pulls() == []

    world.github.fail_next(f"/repos/{BILLING}/pulls", 429, retry_after=1, method="POST")
    world.model.fail_role("reviewer", 500)
    run_id, ok = run_ticket_process({}, world.env, resume=first.run_id)
    assert ok, step_failures(instance, run_id)

    ran = step_successes(instance, run_id)
    assert not ran & BEFORE_PATCH, ran
    assert {"patch", "pull_request", "review_rounds", "ci_outcome"} <= ran
    after = world.model.calls_by_role()
    assert after["repo_confirmer"] == 1 and after["test_writer"] == 1, after
    assert after["implementer"] == 2  # the killed turn and the resumed one
    assert [r.status for r in world.github.requests_to(f"/repos/{BILLING}/pulls", "POST")][:2] == [
        429,
        201,
    ]
    assert world.model.calls_by_role(ok_only=False)["reviewer"] == 3  # one 500, retried

    pulls = world.github.all_pulls(BILLING)
    assert len(pulls) == 1 and pulls[0]["head"]["ref"] == f"veranda/{key.lower()}"
    opened = [c for c in world.linear.bot_comments(key) if "pull request" in c.lower()]
    assert len(opened) == 1

    # delivered again once done: an edit (new updatedAt) and a cursorless sensor start nothing
    world.linear.touch(key, description=SAMPLE_TICKET_BODY + "\nAny update?")
    assert sensors.tick(instance, "linear_tickets") == []
    assert SensorDriver().tick(instance, "linear_tickets") == []
    assert len(instance.get_runs()) == 2 and len(world.github.all_pulls()) == 1
