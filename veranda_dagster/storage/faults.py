"""A storage fault as a typed error naming the asset, the partition and the path.

A full disk used to surface as a bare ``OSError`` naming nothing, and a partition key longer
than the file system allows as ``File name too long``. The operator needs to know which value
could not be stored, where, and why in words: that is this error.
"""

from __future__ import annotations

import errno
from pathlib import Path

from veranda_dagster.domain.core.errors import StoredValueError

REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.EIO: "an I/O error (a failing disk or a lost network volume)",
}


class StorageFaultError(StoredValueError):
    """The value store could not write or read a value: ``asset``, ``partition`` and ``path``
    say which and where; ``reason`` says why in words."""

    def __init__(self, action: str, asset: str, partition: str, path: Path, exc: OSError) -> None:
        self.asset, self.partition, self.path = asset, partition, path
        self.errno = exc.errno
        self.reason = REASONS.get(exc.errno or 0, exc.strerror or type(exc).__name__)
        super().__init__(
            f"cannot {action} asset {asset!r} partition {partition!r} at {path}: {self.reason}"
        )
