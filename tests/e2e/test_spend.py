"""Spend on the real graph, as a user meets it: a ticket stopped by its cap mid-``patch`` is
raised alone with ``veranda budget raise`` and re-executed from failure. Every figure is held
against what the scripted model server billed (its own count of every answer's usage): the
ledger after the stop and after the resume, the overshoot of the cap (at most one request), and
the phases that finished before the stop, which are not paid for again."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import step_failures, step_successes
from veranda_dagster.cli import main as veranda
from veranda_dagster.domain.core.budget import BUDGET_ENV
from veranda_dagster.observability.materializations import read_phase_records
from veranda_dagster.observability.report import report_from_instance
from veranda_dagster.sim.driver import SensorDriver, run_tags, run_ticket_process
from veranda_dagster.sim.sample_org import BILLING, SAMPLE_TICKET_BODY, SAMPLE_TICKET_TITLE
from veranda_dagster.sim.world import SimWorld
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.value_stores import FilesystemValues

pytestmark = pytest.mark.slow

TINY_BUDGET_USD = "0.015"
"""Above what ``ticket`` to ``red_tests`` bill, below that plus the implementer's turn."""


def test_a_cap_raised_for_one_ticket_resumes_it_without_paying_again_and_the_ledger_is_the_bill(
    world: SimWorld, instance
) -> None:
    key = world.linear.file_ticket(SAMPLE_TICKET_TITLE, SAMPLE_TICKET_BODY)["identifier"]
    (request,) = SensorDriver().tick(instance, "linear_tickets")
    env = {**world.env, BUDGET_ENV: TINY_BUDGET_USD}
    ledger = StoreLedger(FilesystemValues(world.dagster_home / "veranda_values"))

    run_id, ok = run_ticket_process(run_tags(request), env)
    assert not ok and list(step_failures(instance, run_id)) == ["patch"]
    billed = world.model.billed_usd()
    assert ledger.spent(key) == billed > float(TINY_BUDGET_USD)
    largest = max(b.usd for b in world.model.billed)
    assert ledger.spent(key) - float(TINY_BUDGET_USD) <= largest  # one request's overshoot
    assert {e.source for e in ledger.entries(key)} == {"proxy"}
    assert {"red_tests", "patch"} <= {e.phase for e in ledger.entries(key)}
    (note,) = [c for c in world.linear.bot_comments(key) if "budget" in c]
    assert "Spent per phase: " in note and "red_tests $" in note
    assert f"veranda budget raise {key} --to" in note
    turns_before = world.model.calls_by_role()
    stopped_at = ledger.spent(key)

    assert veranda(["budget", "raise", key, "--to", "10"]) == 0
    resumed, ok = run_ticket_process({}, env, resume=run_id)  # the default cap is still tiny
    assert ok, step_failures(instance, resumed)
    assert not {"ticket", "repo_guess", "context_pack", "red_tests"} & step_successes(
        instance, resumed
    )
    after = world.model.calls_by_role()
    assert after["repo_confirmer"] == turns_before["repo_confirmer"] == 1  # not billed again
    assert after["test_writer"] == turns_before["test_writer"] == 1
    assert len(world.github.all_pulls(BILLING)) == 1
    assert ledger.spent(key) == world.model.billed_usd()

    records = [r for r in read_phase_records(instance) if r.run_id == resumed]
    by_phase = {r.phase: r for r in records}
    assert by_phase["patch"].num("ticket_cap_usd") == 10.0
    assert by_phase["patch"].num("ticket_spent_usd") <= ledger.spent(key)
    # what the resumed run's materializations report is what it paid, to the micro-dollar
    reported = sum(r.num("usd") for r in records)
    assert abs(reported - (ledger.spent(key) - stopped_at)) < 1e-5
    # and ``veranda report`` says what was billed, and which part no materialization holds:
    # the attempt of ``patch`` stopped at the cap
    first_run = sum(r.num("usd") for r in read_phase_records(instance) if r.run_id == run_id)
    ticket = report_from_instance(instance, None, ledger.spent)["tickets"][key]
    assert ticket["billed_usd"] == world.model.billed_usd()
    assert abs(ticket["not_materialized_usd"] - (stopped_at - first_run)) < 1e-5
