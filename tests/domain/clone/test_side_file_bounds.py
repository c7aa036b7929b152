"""The files the product keeps beside a clone (the setup pointer, the borrow record) are read
back within their bounds: one byte past is not read (as if absent), the same content at the
bound is. Each table row has its twin."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.domain.clone import active_environment, borrowed_objects
from veranda_dagster.domain.clone.active_environment import (
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
