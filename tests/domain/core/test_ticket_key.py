"""One strict grammar for ticket keys, checked before any folder is made from one."""

from __future__ import annotations

from pathlib import Path

import pytest

from veranda_dagster.domain.clone.workspace import Workspace
from veranda_dagster.domain.core.bounds import MAX_TICKET_KEY_CHARS
from veranda_dagster.domain.core.ticket_key import (
    InvalidTicketKeyError,
    is_ticket_key,
    ticket_dir,
)
from veranda_dagster.partitions import is_ticket_key as partition_grammar
from veranda_dagster.resources.workspace import WorkspaceResource

GOOD = ["ENG-123", "A-1", "SLACK-7", "slack-C0123ABCD-1712345678.000100"]
BAD = [
    "ENG-123\n",  # Python's $ matched before a trailing newline
    "slack-C0123ABCD-1712345678.000100\n",
    "..",
    "../ENG-1",
    "ENG-1/../../etc",
    "ENG-\x001",
    "ENG-1\r",
    "eng-1",
    "",
    "ENG-" + "1" * MAX_TICKET_KEY_CHARS,
    "slack-" + "C" * 60 + "-1712345678.0001",
    "\uff25\uff2e\uff27-1",  # fullwidth letters
]


@pytest.mark.parametrize("key", GOOD)
def test_valid_keys_pass(key):
    assert is_ticket_key(key) and partition_grammar(key)


@pytest.mark.parametrize("key", BAD)
def test_every_other_key_is_refused_before_the_file_system(key, tmp_path):
    assert not is_ticket_key(key) and not partition_grammar(key)
    with pytest.raises(InvalidTicketKeyError):
        ticket_dir(tmp_path, key)
    with pytest.raises(InvalidTicketKeyError):
        _ = Workspace(tmp_path / "ws", key, "http://127.0.0.1/x.git", "b").path
    workspace = WorkspaceResource(root=str(tmp_path / "root"))
    with pytest.raises(InvalidTicketKeyError):
        workspace.scratch_dir(key)
    assert not (tmp_path / "root").exists() or list((tmp_path / "root").rglob("*")) in (
        [],
        [tmp_path / "root" / "_scratch"],
    )


def test_the_length_bound_is_exact():
    key = "slack-C0123ABCD-1712345678.000100"
    assert len(key) <= MAX_TICKET_KEY_CHARS
    assert not is_ticket_key(object()) and not is_ticket_key(None)


def test_the_error_shows_the_key_escaped():
    with pytest.raises(InvalidTicketKeyError) as err:
        ticket_dir("/tmp", "ENG-1\n")
    assert "\n" not in str(err.value) and "'ENG-1\\n'" in str(err.value)


def test_a_folder_under_root_that_is_a_link_elsewhere_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "ENG-1").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InvalidTicketKeyError):
        ticket_dir(tmp_path / "root", "ENG-1")
    assert ticket_dir(tmp_path / "root", "ENG-2") == Path(tmp_path / "root" / "ENG-2")
