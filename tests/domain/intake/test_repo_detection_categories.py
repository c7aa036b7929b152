"""Issue 15's categories of evidence a person acts on, each beside its adversarial twin, and the
asks that stay mandatory. Rows: tests/fixtures/repo_detection/categories.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from veranda_dagster.domain.core.bounds import MAX_DETECT_TEXT_CHARS, MAX_REPO_EVIDENCE
from veranda_dagster.domain.core.models import RepoGuess, Ticket
from veranda_dagster.domain.intake.catalog import load_catalog
from veranda_dagster.domain.intake.repo_detection import detect_repo

FIX = Path(__file__).resolve().parents[2] / "fixtures/repo_detection"
CATALOG = load_catalog(FIX / "catalog_services_renames.json")
ROWS = yaml.safe_load((FIX / "categories.yaml").read_text())


def ticket(row: dict) -> Ticket:
    return Ticket(
        id="ENG-9",
        source="linear",
        title=row.get("title", ""),
        description=row.get("description", ""),
        labels=row.get("labels", []),
    )


@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
def test_category(row):
    guess = detect_repo(ticket(row), CATALOG, model=row.get("model", False))
    for key, want in row["expect"].items():
        have = getattr(guess, key)
        assert (set(have) == set(want)) if key == "candidates" else have == want, (key, guess)
    if guess.decision == "ask":
        assert guess.question and all(c in guess.question for c in guess.candidates)
        assert "repo: <org>/<name>" in guess.question
    else:
        decided = [e for e in guess.evidence if e.repo == guess.repo]
        assert decided and guess.score == pytest.approx(sum(e.weight for e in decided))


def test_every_category_has_a_twin():
    names = {r["name"] for r in ROWS}
    assert {"twin_service_label_contradicted_by_declaration", "twin_two_former_names"} <= names
    assert "twin_fork_not_in_catalog" in names


def test_the_question_names_the_evidence_and_its_weight():
    row = next(r for r in ROWS if r["name"] == "twin_label_contradicted_by_text")
    question = detect_repo(ticket(row), CATALOG).question or ""
    assert "a repo label (0.80)" in question and "the fix goes there (0.90)" in question


def test_a_name_past_the_text_bound_is_not_read():
    filler = "x " * (MAX_DETECT_TEXT_CHARS // 2)
    far = detect_repo(
        Ticket(id="E", source="linear", title="t", description=filler + "notifier"), CATALOG
    )
    near = detect_repo(Ticket(id="E", source="linear", title="t", description="notifier"), CATALOG)
    assert far.decision == "ask" and near.repo == "acme/notifier"


def test_evidence_kept_on_a_guess_is_bounded():
    names = " ".join(r.name for r in CATALOG.repositories)
    guess = detect_repo(Ticket(id="E", source="linear", title=names, description=names), CATALOG)
    assert len(guess.evidence) == MAX_REPO_EVIDENCE


def test_hostile_text_is_scanned_in_bounded_time():
    """Patterns without nested quantifiers: these inputs would hang a backtracking regex."""
    for text in ["repo:" + " " * 19_000, "a-" * 9_000 + "!", "https://" + "a." * 9_000]:
        detect_repo(Ticket(id="E", source="linear", title="t", description=text), CATALOG)


def test_values_stored_by_earlier_runs_still_load():
    old = {
        "ticket_id": "ENG-1",
        "repo": "acme/api",
        "confidence": "high",
        "signal": "label",
        "decision": "proceed",
        "candidates": ["acme/api"],
        "usd": 0.0,
        "tokens_in": 0,
        "tokens_out": 0,
    }
    guess = RepoGuess.model_validate(old)
    assert guess.evidence == [] and guess.score is None
