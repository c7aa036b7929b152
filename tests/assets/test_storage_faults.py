"""Storage faults as typed errors naming asset, partition and path (never a bare OSError)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.assets.test_storage import _guess
from veranda_dagster.storage import ValueStore
from veranda_dagster.storage.faults import StorageFaultError
from veranda_dagster.storage.value_stores import FilesystemValues


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EDQUOT, "quota"),
        (errno.EACCES, "permission denied"),
        (errno.EROFS, "read-only"),
    ],
)
def test_a_write_fault_names_asset_partition_path_and_reason(tmp_path, monkeypatch, code, words):
    real_fsync = os.fsync

    def failing_fsync(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", failing_fsync)
    store = ValueStore(base_dir=str(tmp_path))
    with pytest.raises(StorageFaultError) as err:
        store.save("repo_guess", "ENG-1", _guess())
    monkeypatch.setattr(os, "fsync", real_fsync)
    fault = err.value
    assert (fault.asset, fault.partition, fault.errno) == ("repo_guess", "ENG-1", code)
    assert fault.path == tmp_path / "repo_guess" / "ENG-1.json"
    assert words in str(fault) and str(fault.path) in str(fault)
    assert list((tmp_path / "repo_guess").iterdir()) == []  # no temp file left behind


def test_a_name_longer_than_the_file_system_allows_is_typed(tmp_path):
    """Real: the file system itself refuses a 300-character file name."""
    values = FilesystemValues(tmp_path)
    long_partition = "P" * 300
    with pytest.raises(StorageFaultError, match="too long for the file system") as err:
        values.write("ticket", long_partition, "{}")
    assert err.value.errno == errno.ENAMETOOLONG and err.value.partition == long_partition
    with pytest.raises(StorageFaultError, match="too long"):
        values.append("events", long_partition, "{}")


def test_a_read_fault_is_typed_too(tmp_path):
    values = FilesystemValues(tmp_path)
    (tmp_path / "ticket").mkdir()
    (tmp_path / "ticket" / "ENG-1.json").mkdir()  # a directory where the value should be
    with pytest.raises(StorageFaultError) as err:
        values.read("ticket", "ENG-1")
    assert err.value.path == Path(tmp_path / "ticket" / "ENG-1.json")
