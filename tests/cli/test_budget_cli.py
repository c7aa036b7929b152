"""``veranda budget``: a ticket's spend per phase from the ledger, and its cap raised alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veranda_dagster.cli import main as veranda
from veranda_dagster.domain.core.budget import BUDGET_ENV, SpendEntry
from veranda_dagster.resources.agents import AgentsResource
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.ledger import MAX_RAISED_CAP_USD, StoreLedger
from veranda_dagster.storage.value_stores import FilesystemValues


@pytest.fixture()
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StoreLedger:
    monkeypatch.setenv("VERANDA_VALUE_STORE", "filesystem")
    monkeypatch.setenv("VERANDA_VALUES_DIR", str(tmp_path / "values"))
    monkeypatch.setenv(BUDGET_ENV, "1")
    found = StoreLedger(FilesystemValues(tmp_path / "values"))
    for phase, usd in (("red_tests", 0.25), ("patch", 0.5), ("patch", 0.5)):
        entry = SpendEntry(role="x", vendor="claude", usd=usd, source="proxy", phase=phase)
        found.record("ENG-9", entry)
    return found


def test_show_prints_spend_per_phase_and_the_cap_in_force(
    ledger: StoreLedger, capsys: pytest.CaptureFixture[str]
) -> None:
    assert veranda(["budget", "show", "ENG-9", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["spent_usd"] == 1.25 and shown["cap_usd"] == 1.0
    assert shown["by_phase"] == {"red_tests": 0.25, "patch": 1.0}
    assert shown["requests"] == shown["metered_by_proxy"] == 3


def test_raise_sets_this_tickets_cap_alone(
    ledger: StoreLedger, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert veranda(["budget", "raise", "ENG-9", "--to", "3"]) == 0
    assert "re-execute" in capsys.readouterr().out.lower()
    agents = AgentsResource(store=ValueStore(base_dir=str(tmp_path / "values")))
    agents = agents.model_copy(update={"ticket_budget_usd": 1.0})
    assert agents.ticket_cap_usd("ENG-9") == 3.0
    assert agents.ticket_cap_usd("ENG-10") == 1.0  # every other ticket keeps the default
    # the bound itself is a cap a person may raise to (``MAX_RAISED_CAP_USD``)
    assert veranda(["budget", "raise", "ENG-9", "--to", f"{MAX_RAISED_CAP_USD}"]) == 0
    assert agents.ticket_cap_usd("ENG-9") == MAX_RAISED_CAP_USD


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["budget", "raise", "ENG-9", "--to", "1.1"], "already spent"),
        (["budget", "raise", "ENG-9"], "needs --to"),
        (["budget", "raise", "ENG-9", "--to", "1e9"], "at most"),
        # one cent past the bound
        (
            ["budget", "raise", "ENG-9", "--to", f"{MAX_RAISED_CAP_USD + 0.01}"],
            f"at most ${MAX_RAISED_CAP_USD:g}",
        ),
        (["budget", "show", "../etc"], "not a ticket key"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    ledger: StoreLedger, argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert veranda(argv) == 2
    assert said in capsys.readouterr().err
    assert ledger.raised_cap("ENG-9") is None
