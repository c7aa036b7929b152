"""Which Dagster run is doing the work in progress, for records that outlive it.

A phase that records progress outside its own value (a review round's marker on the pull
request) names the run that did, and paid for, that work; a later run that reuses it says so
in its value (``models.Reuse``) instead of reporting the calls again; the spend ledger files
each request under the phase that made it. The asset shell sets both around the phase's domain
call (on the thread that runs it); outside a run they are empty.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")

_RUN_ID: ContextVar[str] = ContextVar("veranda_run_id", default="")
_PHASE: ContextVar[str] = ContextVar("veranda_phase", default="")


def in_run(run_id: str, call: Callable[[], T], phase: str = "") -> T:
    """``call()`` with ``run_id`` as the current run and ``phase`` as the phase it runs (the
    spend ledger files each model request under it)."""
    run_token, phase_token = _RUN_ID.set(run_id), _PHASE.set(phase)
    try:
        return call()
    finally:
        _RUN_ID.reset(run_token)
        _PHASE.reset(phase_token)


def current_run_id() -> str:
    return _RUN_ID.get()


def current_phase() -> str:
    return _PHASE.get()
