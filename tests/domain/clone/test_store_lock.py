"""The shared store's lock is waited for at most ``STORE_LOCK_TIMEOUT_S``: a refresh held
past it is a typed error naming the wait; its twin, a holder that lets go in time, is served."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from veranda_dagster.domain.clone import object_cache
from veranda_dagster.domain.clone.object_cache import ObjectStoreError


@pytest.mark.parametrize("released_after", [None, 0.2], ids=["held-past-the-bound", "let-go"])
def test_the_store_lock_is_waited_for_at_most_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, released_after: float | None
) -> None:
    monkeypatch.setattr(object_cache, "STORE_LOCK_TIMEOUT_S", 1.0)
    lock_path = tmp_path / "acme__tools.git.lock"
    holder = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)  # another ticket's refresh
    fcntl.flock(holder, fcntl.LOCK_EX)
    if released_after is not None:
        threading.Timer(released_after, fcntl.flock, (holder, fcntl.LOCK_UN)).start()
    started = time.monotonic()
    try:
        if released_after is None:
            with (
                pytest.raises(ObjectStoreError, match="held the store for over 1s"),
                object_cache._locked(lock_path),
            ):
                pass
        else:
            with object_cache._locked(lock_path):
                pass
    finally:
        os.close(holder)
    waited = time.monotonic() - started
    assert waited < 3 and (waited >= 1.0 if released_after is None else waited < 1.0)
