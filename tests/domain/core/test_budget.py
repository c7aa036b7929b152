"""The dollar cap per ticket, through the real seams: a real phase on a real repository behind a
``BudgetedAgent``, the spend ledger on the real value stores, and the agent every
phase asset builds from the agents resource."""

from __future__ import annotations

import pytest

from tests.domain.conftest import TICKET, ScriptedAgent, reply, write
from tests.fixtures.work.project import PASSING_TEST, RED_TEST
from tests.support.resources import tickets
from veranda_dagster.assets._collaborators import budgeted_agent
from veranda_dagster.domain.core.agent import AgentRequest
from veranda_dagster.domain.core.budget import BudgetedAgent, BudgetExceededError, SpendEntry
from veranda_dagster.domain.work.red_tests import write_red_tests
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.ledger import StoreLedger
from veranda_dagster.storage.value_stores import FilesystemValues

NEW = "tests/test_slugify.py"
TURN_USD = 0.01  # what ScriptedAgent bills per turn


def test_the_turn_that_crosses_the_cap_mid_phase_is_the_last_one(project, tmp_path):
    """Red tests: the first attempt's turn crosses the cap, its tests pass on the base and are
    rejected, and the retry's turn is refused before it starts, with a note on the ticket."""
    inner = ScriptedAgent(
        {"test_writer": [reply("1", write(NEW, PASSING_TEST)), reply("2", write(NEW, RED_TEST))]}
    )
    ledger = StoreLedger(FilesystemValues(tmp_path / "values"))
    notes: list[str] = []
    agent = BudgetedAgent(inner, TICKET.id, TURN_USD, ledger, notify=notes.append)

    with pytest.raises(BudgetExceededError) as caught:
        write_red_tests(TICKET, project.pack, project.workspace, agent)

    assert inner.roles() == ["test_writer"]  # the second attempt never reached the model
    message = str(caught.value)
    assert "cost $0.01 of this ticket's $0.01 budget, so the test_writer turn" in message
    assert "VERANDA_TICKET_BUDGET_USD" in message and "re-execute" in message
    assert caught.value.retryable is False
    assert notes == [message]
    assert ledger.spent(TICKET.id) == TURN_USD  # the rejected attempt's turn is still counted
    assert [e.role for e in ledger.entries(TICKET.id)] == ["test_writer"]


def test_a_new_process_honours_what_was_spent_and_a_raised_cap_lets_it_go_on(tmp_path):
    values = tmp_path / "values"
    first = StoreLedger(FilesystemValues(values))
    for usd in (0.4, 0.7):
        first.record(TICKET.id, SpendEntry(role="implementer", vendor="claude", usd=usd))

    def resource(cap: float) -> AgentsResource:  # a fresh resource, as a resumed run builds
        return AgentsResource(store=ValueStore(base_dir=str(values)), ticket_budget_usd=cap)

    request = AgentRequest(role="implementer", tier="high", prompt="p", workdir=str(tmp_path))
    with tickets().connected() as channel:
        agent = budgeted_agent(resource(1.0), TICKET, channel)
        assert isinstance(agent, BudgetedAgent) and agent.ledger.spent(TICKET.id) == 1.1
        with pytest.raises(BudgetExceededError, match=r"\$1\.10 of this ticket's \$1\.00"):
            agent.run(request)  # refused before the (unconfigured) vendors are even tried

    scripted = ScriptedAgent({"implementer": [reply("ok")]})
    raised = BudgetedAgent(scripted, TICKET.id, 2.0, StoreLedger(FilesystemValues(values)))
    assert raised.run(request).text == "ok"
    assert StoreLedger(FilesystemValues(values)).spent(TICKET.id) == 1.11
    assert StoreLedger(FilesystemValues(values)).spent("ENG-8") == 0.0  # per ticket


def test_a_torn_last_line_is_skipped_not_fatal(tmp_path):
    values = FilesystemValues(tmp_path / "values")
    ledger = StoreLedger(values)
    ledger.record(TICKET.id, SpendEntry(role="reviewer", vendor="codex", usd=0.25))
    with values.log_path("spend", TICKET.id).open("a") as handle:
        handle.write('{"role": "implementer", "fam')  # killed mid-append
    assert ledger.spent(TICKET.id) == 0.25
    ledger.record(TICKET.id, SpendEntry(role="reviewer", vendor="codex", usd=0.5))
    assert ledger.spent(TICKET.id) == 0.75


def test_a_note_that_cannot_be_posted_is_named_in_the_error(tmp_path):
    def broken(text: str) -> None:
        raise RuntimeError("linear is down")

    ledger = StoreLedger(FilesystemValues(tmp_path / "values"))
    ledger.record(TICKET.id, SpendEntry(role="implementer", vendor="claude", usd=5.0))
    agent = BudgetedAgent(ScriptedAgent(), TICKET.id, 5.0, ledger, notify=broken)
    request = AgentRequest(role="reviewer", tier="high", prompt="p", workdir=str(tmp_path))
    with pytest.raises(BudgetExceededError, match="not posted: RuntimeError: linear is down"):
        agent.run(request)


@pytest.mark.postgres
def test_the_ledger_on_postgres_survives_a_new_store_object(postgres_url):
    from veranda_dagster.storage.value_stores import PostgresValues

    StoreLedger(PostgresValues(postgres_url)).record(
        "ENG-77", SpendEntry(role="implementer", vendor="claude", usd=1.5)
    )
    StoreLedger(PostgresValues(postgres_url)).record(
        "ENG-77", SpendEntry(role="reviewer", vendor="codex", usd=0.25)
    )
    fresh = StoreLedger(PostgresValues(postgres_url))
    assert fresh.spent("ENG-77") == 1.75
    assert [e.role for e in fresh.entries("ENG-77")] == ["implementer", "reviewer"]
