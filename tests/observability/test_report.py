"""``veranda report --json`` totals equal the sum of the stored materialization metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.observability.fake_graph import ROWS, TICKET_KEYS
from veranda_dagster.cli import main
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.observability.report import parse_since


@pytest.fixture()
def home(ops_home: Path) -> Path:
    return ops_home


def _cli_json(capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    assert main(["report", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_report_json_totals_equal_sum_of_metadata(home: Path, capsys) -> None:
    report = _cli_json(capsys)
    total = report["total"]
    assert total["usd"] == pytest.approx(sum(m["usd"] for m in ROWS.values()))
    assert total["tokens_in"] == sum(m["tokens_in"] for m in ROWS.values())
    assert total["tokens_out"] == sum(m["tokens_out"] for m in ROWS.values())
    assert total["model_calls"] == sum(m["model_calls"] for m in ROWS.values())
    assert total["materializations"] == len(ROWS)
    assert total["tickets"] == len(TICKET_KEYS)
    for phase in ("repo_guess", "patch", "ci_outcome"):
        expected = sum(m["duration_s"] for (p, _), m in ROWS.items() if p == phase)
        assert total["phase_seconds"][phase] == pytest.approx(expected)
    for key in TICKET_KEYS:
        mine = {p: m for (p, t), m in ROWS.items() if t == key}
        ticket = report["tickets"][key]
        assert ticket["usd"] == pytest.approx(sum(m["usd"] for m in mine.values()))
        assert ticket["outcomes"] == {p: m["outcome"] for p, m in mine.items()}
    assert report["resolutions_by_reason"] == {
        "fallback_auth": 1,
        "fallback_quota": 1,
        "preferred": 3,
    }
    assert report["tickets"]["ENG-1"]["resolutions"] == {
        "claude/api_key preferred": 1,
        "codex/api_key fallback_quota": 1,
    }


def test_report_since_in_the_future_is_empty_and_text_mode_prints_totals(home, capsys) -> None:
    report = _cli_json(capsys, "--since", "2999-01-01")
    assert report["total"]["materializations"] == 0 and report["tickets"] == {}
    assert main(["report"]) == 0
    text = capsys.readouterr().out
    assert "TOTAL 2 tickets: $2.0836" in text and "ENG-2" in text


def test_bad_since_is_a_named_error(home, capsys) -> None:
    assert main(["report", "--since", "yesterday"]) == 2
    assert "--since 'yesterday'" in capsys.readouterr().err
    with pytest.raises(InputError):
        parse_since("12/01/2026")
