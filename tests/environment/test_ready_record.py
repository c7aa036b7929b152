"""The ready record of an environment folder, which the repository's setup script could have
planted: a link to a host file, a FIFO or a folder at its name is replaced, never written
through or waited on (a real setup in the sandbox); read back only as a regular file within
``MAX_READY_BYTES`` (a table, each case with its twin)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from tests.environment.conftest import make_repo
from veranda_dagster.domain.clone.active_environment import READY_FILE
from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.core.bounds import MAX_REPO_FILE_BYTES
from veranda_dagster.domain.core.models import SetupOutcome
from veranda_dagster.environment import ready_record
from veranda_dagster.environment.ready_record import read_ready, write_ready
from veranda_dagster.environment.setup import prepare_environment

T = TypeVar("T")

PLANTS = {
    "link-to-a-host-file": 'ln -s "{host}" "$VERANDA_ENV/{ready}"\n',
    "fifo": 'mkfifo "$VERANDA_ENV/{ready}"\n',
    "folder": 'mkdir -p "$VERANDA_ENV/{ready}/inside"\n',
    "nothing-planted": "true\n",
}


def _bounded(call: Callable[[], T], release: Callable[[], None], what: str) -> T:
    """``call`` in a thread for at most 60 s; if it is still blocked, ``release`` unblocks it
    and the test fails (a FIFO waited on is the failure these tests look for)."""
    answer: list[T] = []
    worker = threading.Thread(target=lambda: answer.append(call()), daemon=True)
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():
        release()
        worker.join(timeout=10)
        pytest.fail(f"{what} waited on the planted entry")
    assert answer, f"{what} raised (see the thread's traceback)"
    return answer[0]


def _open_fifo_ends(path: Path) -> None:
    for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
        with contextlib.suppress(OSError):
            os.close(os.open(path, flags))


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_an_entry_the_setup_planted_at_the_ready_records_name_is_replaced(
    tmp_path: Path, plant: str
) -> None:
    host = tmp_path / "host-file"
    host.write_text("the host's own\n")
    script = PLANTS[plant].format(host=host, ready=READY_FILE)
    repo = make_repo(tmp_path, script)
    cache = tmp_path / "env-cache"
    env = {**os.environ, "VERANDA_ENV_CACHE": str(cache)}
    planted: list[Path] = []

    def prepare() -> SetupOutcome:
        return prepare_environment("acme/tools", repo, read_repo_facts(repo), environ=env)

    def release() -> None:
        for path in cache.glob(f"*/*/{READY_FILE}"):
            planted.append(path)
            _open_fifo_ends(path)

    outcome = _bounded(prepare, release, "the setup's ready record")
    ready = Path(outcome.env_dir) / READY_FILE
    assert outcome.status == "ready"
    assert ready.is_file() and not ready.is_symlink()
    assert host.read_text() == "the host's own\n"
    again = _bounded(prepare, release, "the second ticket's read")
    assert (again.status, again.env_dir) == ("cached", outcome.env_dir)


def _outcome() -> SetupOutcome:
    return SetupOutcome(status="ready", source=".veranda/setup.sh", commands=["true"], key="k")


@pytest.mark.parametrize(
    ("padding", "read"),
    [(1, False), (0, True)],
    ids=["one-byte-past-the-bound-unread", "at-the-bound-read"],
)
def test_a_ready_record_past_its_bound_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, padding: int, read: bool
) -> None:
    """A record longer than ``MAX_READY_BYTES`` is not the product's and is not read (the
    folder counts as not ready); its twin, the same record exactly at the bound, is read."""
    write_ready(tmp_path, _outcome())
    record = tmp_path / READY_FILE
    size = record.stat().st_size
    with record.open("a") as handle:
        handle.write(" " * (100 + padding))  # trailing blanks: still valid JSON
    monkeypatch.setattr(ready_record, "MAX_READY_BYTES", size + 100)
    assert (read_ready(tmp_path) == _outcome()) is read


@pytest.mark.parametrize("kind", ["link", "fifo", "regular"])
def test_a_ready_record_is_read_only_from_a_regular_file_not_through_a_link(
    tmp_path: Path, kind: str
) -> None:
    """A link (here to a valid record elsewhere: ``/dev/zero`` would be endless) and a FIFO
    are not read, without waiting; the regular file beside them is."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_ready(elsewhere, _outcome())
    folder = tmp_path / "env"
    folder.mkdir()
    record = folder / READY_FILE
    if kind == "link":
        record.symlink_to(elsewhere / READY_FILE)
    elif kind == "fifo":
        os.mkfifo(record)
    else:
        write_ready(folder, _outcome())
    found = _bounded(lambda: read_ready(folder), lambda: _open_fifo_ends(record), "read_ready")
    assert (found == _outcome()) is (kind == "regular")


def test_a_record_of_commands_that_escape_past_the_bound_is_cut_and_still_read(
    tmp_path: Path,
) -> None:
    """A devcontainer's commands are the repository's: a megabyte of control characters is
    six megabytes of JSON, past ``MAX_READY_BYTES``, and an unreadable record would run the
    setup again on every ticket. The record is cut to fit and read back ready; its twin, a
    small record, is read whole."""
    escaping = "\x01" * MAX_REPO_FILE_BYTES
    huge = SetupOutcome(status="ready", source=".devcontainer.json", commands=[escaping])
    assert len(huge.model_dump_json()) > ready_record.MAX_READY_BYTES
    write_ready(tmp_path, huge)
    read = read_ready(tmp_path)
    assert read is not None and (read.status, read.source) == ("ready", ".devcontainer.json")
    assert read.commands and read.commands[0] == escaping[: len(read.commands[0])]
    small = tmp_path / "small"
    small.mkdir()
    write_ready(small, _outcome())
    assert read_ready(small) == _outcome()
