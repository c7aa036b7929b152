"""The dollar cap on the real graph: a budget that runs out inside ``patch`` stops the run
there with a note on the ticket; raising it and re-executing from failure finishes the ticket
without paying again for the phases before ``patch``."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import step_failures, step_successes
from veranda_dagster.domain.core.budget import BUDGET_ENV
from veranda_dagster.sim.driver import SensorDriver, run_tags, run_ticket_process
from veranda_dagster.sim.sample_org import BILLING, SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.world import SimWorld

pytestmark = pytest.mark.slow

TINY_BUDGET_USD = "0.015"
"""The scripted model bills about $0.0011 for the confirmation (with the health probe the first
turn runs), $0.0115 for the red tests and $0.0333 for the implementer's turn: that turn starts
under $0.015 and its first request crosses it, so the turn's proxy refuses its next request and
neither it nor the independent tester's turn, the second of ``patch``, is paid for."""


def test_a_spent_budget_stops_the_run_mid_patch_and_a_raised_one_resumes_it(
    world: SimWorld, instance
):
    key = world.linear.file_ticket(SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)["identifier"]
    (request,) = SensorDriver().tick(instance, "linear_tickets")

    run_id, ok = run_ticket_process(run_tags(request), {**world.env, BUDGET_ENV: TINY_BUDGET_USD})
    assert not ok
    failures = step_failures(instance, run_id)
    assert list(failures) == ["patch"], failures
    assert "BudgetExceededError" in failures["patch"] and BUDGET_ENV in failures["patch"]
    assert {"ticket", "repo_guess", "context_pack", "red_tests"} <= step_successes(instance, run_id)
    billed = world.model.calls_by_role()
    assert billed["implementer"] == 1 and billed["second_test_writer"] == 0
    notes = [c for c in world.linear.bot_comments(key) if "budget" in c]
    assert len(notes) == 1 and f"${float(TINY_BUDGET_USD):.2f} budget" in notes[0]
    assert world.github.all_pulls() == []

    resumed, ok = run_ticket_process({}, {**world.env, BUDGET_ENV: "10"}, resume=run_id)
    assert ok, step_failures(instance, resumed)
    assert not {"ticket", "repo_guess", "context_pack", "red_tests"} & step_successes(
        instance, resumed
    )
    after = world.model.calls_by_role()
    assert after["repo_confirmer"] == billed["repo_confirmer"] == 1  # not billed again
    assert after["test_writer"] == billed["test_writer"] == 1
    assert after["implementer"] == 2 and after["second_test_writer"] == 1
    assert len(world.github.all_pulls(BILLING)) == 1
