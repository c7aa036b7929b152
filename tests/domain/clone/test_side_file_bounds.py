"""The files the product keeps beside a clone (the setup pointer, the borrow record) are read
back within their bounds: one byte past is not read (as if absent), the same content at the
bound is. Each table row has its twin."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.domain.clone import active_environment, borrowed_objects
from veranda_dagster.domain.clone.active_environment import (
    MAX_POINTER_BYTES,
    fitting_pointer,
    pointer_path,
    setup_outcome,
    write_pointer,
)
from veranda_dagster.domain.clone.borrowed_objects import borrowed_store, record_path
from veranda_dagster.domain.core.models import SetupOutcome


def _clone(tmp_path: Path) -> Path:
    repo = tmp_path / "work" / "acme__tools"
    repo.mkdir(parents=True)
    return repo


@pytest.mark.parametrize(("extra", "read"), [(1, False), (0, True)], ids=["past", "at"])
def test_the_setup_pointer_is_read_within_max_pointer_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: int, read: bool
) -> None:
    repo = _clone(tmp_path)
    outcome = SetupOutcome(status="ready", source=".veranda/setup.sh", commands=["make env"])
    write_pointer(repo, outcome)
    path = pointer_path(repo)
    size = path.stat().st_size
    path.write_text(path.read_text() + " " * (10 + extra))  # trailing blanks: still valid JSON
    monkeypatch.setattr(active_environment, "MAX_POINTER_BYTES", size + 10)
    assert (setup_outcome(repo) == outcome) is read


@pytest.mark.parametrize(("extra", "read"), [(1, False), (0, True)], ids=["past", "at"])
def test_the_borrow_record_is_read_within_max_record_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: int, read: bool
) -> None:
    repo = _clone(tmp_path)
    store = repo.parent / "_objects" / "acme__tools.git"
    (store / "objects").mkdir(parents=True)
    record = record_path(repo)
    record.write_text(store.name + "\n" * (10 + extra))  # stripped when read
    monkeypatch.setattr(borrowed_objects, "MAX_RECORD_BYTES", len(store.name) + 10)
    assert (borrowed_store(repo) == store) is read


HUGE = "x" * MAX_POINTER_BYTES
"""One repository-declared string as long as the whole pointer bound."""


def _ready(**fields: object) -> SetupOutcome:
    return SetupOutcome.model_validate({"status": "ready", **fields})


@pytest.mark.parametrize(
    ("name", "outcome", "kept_commands"),
    [
        ("a huge command", _ready(commands=["make env", HUGE]), 2),
        ("sixteen long commands", _ready(commands=[HUGE[:20_000]] * 16), 16),
        ("a huge output tail", _ready(commands=["make"], output_tail=HUGE), 1),
        ("many long refusals", _ready(refused=[HUGE[:1_000]] * 200), 0),
        ("every kind at once", _ready(commands=[HUGE] * 16, output_tail=HUGE, refused=[HUGE]), 16),
        # twin: an outcome within the bound is written whole
        ("a small outcome", _ready(commands=["make env"], output_tail="ok"), 1),
    ],
)
def test_a_pointer_the_repository_would_outgrow_is_cut_to_fit_not_lost(
    tmp_path: Path, name: str, outcome: SetupOutcome, kept_commands: int
) -> None:
    repo = _clone(tmp_path)
    whole = outcome.model_copy(update={"source": ".devcontainer.json", "env_dir": "/envs/e1"})
    write_pointer(repo, whole)
    assert pointer_path(repo).stat().st_size <= MAX_POINTER_BYTES, name
    read = setup_outcome(repo)
    assert read is not None, name  # without the cut: read as no setup at all
    assert (read.status, read.source, read.env_dir) == ("ready", ".devcontainer.json", "/envs/e1")
    assert len(read.commands) <= kept_commands
    if len(whole.model_dump_json()) <= MAX_POINTER_BYTES:
        assert read == whole, name
    else:
        assert read != whole, name
    assert fitting_pointer(read) == read  # a fitted pointer is a fixed point
