"""The filesystem value store: atomic replace, safe paths, typed errors naming what is wrong."""

from __future__ import annotations

import os

import pytest

from veranda_dagster.domain.errors import StoredValueError
from veranda_dagster.domain.models import ModelCall, RepoGuess, Ticket
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.backends import FilesystemValues


def _guess(repo: str = "acme/api") -> RepoGuess:
    call = ModelCall(role="repo_confirmer", family="codex", mode="api_key", tier="cheap", usd=0.02)
    return RepoGuess(
        ticket_id="ENG-1",
        repo=repo,
        confidence="high",
        signal="url",
        decision="proceed",
        calls=[call],
    )


def test_round_trip_keeps_type_and_derived_totals(tmp_path):
    store = ValueStore(base_dir=str(tmp_path))
    where = store.save("repo_guess", "ENG-1", _guess())
    assert where == str(tmp_path / "repo_guess" / "ENG-1.json")
    loaded = store.load("repo_guess", "ENG-1")
    assert isinstance(loaded, RepoGuess) and loaded == _guess() and loaded.usd == 0.02


def test_write_replaces_atomically_and_leaves_no_temp_files(tmp_path):
    store = ValueStore(base_dir=str(tmp_path))
    store.save("repo_guess", "ENG-1", _guess("acme/api"))
    store.save("repo_guess", "ENG-1", _guess("acme/web"))
    assert store.load("repo_guess", "ENG-1").repo == "acme/web"
    assert sorted(p.name for p in (tmp_path / "repo_guess").iterdir()) == ["ENG-1.json"]


def test_a_write_that_fails_midway_keeps_the_old_value(tmp_path, monkeypatch):
    store = ValueStore(base_dir=str(tmp_path))
    store.save("repo_guess", "ENG-1", _guess("acme/api"))

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="No space left"):
        store.save("repo_guess", "ENG-1", _guess("acme/web"))
    monkeypatch.undo()
    assert store.load("repo_guess", "ENG-1").repo == "acme/api"
    assert sorted(p.name for p in (tmp_path / "repo_guess").iterdir()) == ["ENG-1.json"]


def test_keys_cannot_escape_the_store(tmp_path):
    values = FilesystemValues(tmp_path / "store")
    path = values.path("..", "../../etc/passwd")
    assert path.resolve().is_relative_to((tmp_path / "store").resolve())
    slack = values.path("ticket", "slack-C0123ABCD-1712345678.000100")
    assert slack.name == "slack-C0123ABCD-1712345678.000100.json"


def test_missing_and_corrupt_values_name_asset_and_partition(tmp_path):
    store = ValueStore(base_dir=str(tmp_path))
    with pytest.raises(
        StoredValueError, match="no stored value for asset 'ticket' partition 'X-1'"
    ):
        store.load("ticket", "X-1")
    (tmp_path / "ticket").mkdir()
    (tmp_path / "ticket" / "X-1.json").write_bytes(b"\xff\xfe not utf8")
    with pytest.raises(StoredValueError, match="'ticket' partition 'X-1' is unreadable"):
        store.load("ticket", "X-1")
    (tmp_path / "ticket" / "X-1.json").write_text("[1, 2")
    with pytest.raises(StoredValueError, match="'ticket' partition 'X-1' is not valid JSON"):
        store.load("ticket", "X-1")
    assert store.load_or_none("ticket", "X-2") is None
    with pytest.raises(StoredValueError, match="no value type is registered"):
        store.load("unknown_asset", "X-1")


def test_stored_json_is_the_models_own_dump(tmp_path):
    store = ValueStore(base_dir=str(tmp_path))
    ticket = Ticket(id="ENG-3", source="linear", title="t", labels=["repo:acme/api"])
    store.save("ticket", "ENG-3", ticket)
    assert (tmp_path / "ticket" / "ENG-3.json").read_text() == ticket.model_dump_json()
