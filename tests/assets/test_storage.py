"""The filesystem value store: atomic replace, safe paths, typed errors naming what is wrong."""

from __future__ import annotations

import os

import pytest

from veranda_dagster.domain.core.errors import StoredValueError
from veranda_dagster.domain.core.models import ModelCall, RepoGuess, Ticket
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.value_stores import FilesystemValues


def _guess(repo: str = "acme/api") -> RepoGuess:
    call = ModelCall(role="repo_confirmer", vendor="codex", mode="api_key", tier="cheap", usd=0.02)
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
    with pytest.raises(StoredValueError, match=r"'repo_guess' partition 'ENG-1' at .*: the disk"):
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


# --- leftovers of a writer killed mid-write -------------------------------------------------

_KILLED_WRITER = """
import os, sys, time
from veranda_dagster.storage.value_stores import FilesystemValues
def hang(fd):
    print("writing", flush=True)
    time.sleep(600)
os.fsync = hang  # the write has its temp file and is stuck before the rename
FilesystemValues(sys.argv[1]).write("patch", sys.argv[2], '{"half": "' + "x" * 100000 + '"}')
"""


def _kill_a_writer(root, partition: str):
    import signal
    import subprocess
    import sys

    with subprocess.Popen(  # closes its pipe on leaving
        [sys.executable, "-c", _KILLED_WRITER, str(root), partition],
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "writing"
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
    leftovers = list((root / "patch").glob(f".{partition}.json.*.tmp"))
    assert len(leftovers) == 1, "the killed writer left its temp file"
    return leftovers[0]


def _age(path, seconds: float) -> None:
    import time

    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_killed_writers_temp_file_is_removed_by_the_next_write_once_stale(tmp_path):
    from veranda_dagster.domain.core.bounds import STALE_TEMP_VALUE_AGE_S

    root = tmp_path / "values"
    store = FilesystemValues(root)
    store.write("patch", "ENG-1", '{"v": 1}')
    leftover = _kill_a_writer(root, "ENG-1")

    store.write("patch", "ENG-2", '{"v": 2}')  # young: it may be a live writer's, it stays
    assert leftover.exists()
    _age(leftover, STALE_TEMP_VALUE_AGE_S - 60)
    store.write("patch", "ENG-2", '{"v": 3}')
    assert leftover.exists()

    _age(leftover, STALE_TEMP_VALUE_AGE_S + 60)
    store.write("patch", "ENG-2", '{"v": 4}')
    assert not leftover.exists()
    assert store.read("patch", "ENG-1") == '{"v": 1}'  # the committed value is untouched
    assert sorted(p.name for p in (root / "patch").iterdir()) == ["ENG-1.json", "ENG-2.json"]


def test_stale_temp_files_anywhere_in_the_store_are_removed_on_start(tmp_path):
    """ "Start" is the store's first use in a process: a fresh process sweeps every folder."""
    import subprocess
    import sys

    from veranda_dagster.domain.core.bounds import STALE_TEMP_VALUE_AGE_S

    root = tmp_path / "values"
    stale = _kill_a_writer(root, "ENG-7")
    young = _kill_a_writer(root, "ENG-8")
    _age(stale, STALE_TEMP_VALUE_AGE_S + 60)
    not_ours = root / "patch" / "notes.tmp"  # not a store temp file (no leading dot): kept
    not_ours.write_text("x")
    _age(not_ours, STALE_TEMP_VALUE_AGE_S + 60)

    code = "import sys; from veranda_dagster.storage import ValueStore; "
    code += "ValueStore(base_dir=sys.argv[1]).values()"
    subprocess.run([sys.executable, "-c", code, str(root)], check=True, timeout=60)
    assert not stale.exists() and young.exists() and not_ours.exists()
