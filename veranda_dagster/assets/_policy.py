"""Retry and timeout policy per phase, declared next to the step like a Temporal activity.

A model phase is not a git push: a model turn costs money and minutes, so model phases retry
once with a long backoff, while API-only phases (fetching a ticket, opening a pull request)
retry a few times quickly. Which *errors* retry is decided by type in ``_shell``: only an error
whose ``retryable`` is true (``TransientError``, a ``BackendError`` for an upstream or
unreachable vendor) or an unexpected exception reaches the ``RetryPolicy``; input and config
errors fail the step at once with ``dg.Failure(allow_retries=False)``.

``VERANDA_MODEL_RETRY_DELAY_S``, when set, replaces every model phase's base delay (30 s for
``repo_guess``, 60 s for ``context_pack``/``ci_outcome``, 120 s for the rest), so an operator (or
an end-to-end test that injects a 5xx) need not wait minutes. It is read once, at import: a
Dagster process caches the loaded definitions, so a new value takes effect in a new process —
every run worker in the simulation (``sim.driver.run_ticket_process``) is one.

Each timeout is the wall-clock bound of one attempt, derived from the inner bounds it contains,
and enforced by the shell (``PhaseTimeoutError``, retryable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from veranda_dagster.domain.bounds import (
    CI_WAIT_TIMEOUT_S,
    MAX_CI_REPAIRS,
    MAX_PATCH_ATTEMPTS,
    MAX_RED_TEST_ATTEMPTS,
    MAX_REVIEW_ROUNDS,
    VALIDATION_TIMEOUT_S,
)
from veranda_dagster.settings import env_number

AGENT_TURN_S = 1_800.0
"""One agent turn's own cap (``AgentRequest.timeout_s`` default)."""
GIT_AND_API_S = 300.0
"""A clone, a push or a handful of API calls (``workspace.GIT_TIMEOUT_S``)."""

OWNER = "team:veranda"


def _api_retry() -> dg.RetryPolicy:
    return dg.RetryPolicy(
        max_retries=3, delay=5, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
    )


MODEL_RETRY_DELAY_ENV = "VERANDA_MODEL_RETRY_DELAY_S"


def model_retry_delay_override() -> float | None:
    """The operator's model-phase retry delay in seconds, or None to keep each phase's own; a
    value that is not a non-negative number is a ``ConfigError`` naming the variable."""
    return env_number(MODEL_RETRY_DELAY_ENV, None, float, allow_zero=True)


_MODEL_DELAY_OVERRIDE = model_retry_delay_override()


def _model_retry(delay: float = 120) -> dg.RetryPolicy:
    if _MODEL_DELAY_OVERRIDE is not None:
        delay = _MODEL_DELAY_OVERRIDE
    return dg.RetryPolicy(
        max_retries=1, delay=delay, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
    )


@dataclass(frozen=True)
class PhaseSpec:
    name: str
    group: str
    timeout_s: float
    retry: dg.RetryPolicy
    kinds: frozenset[str] = field(default_factory=frozenset)
    model: bool = False
    """Whether the phase pays for model turns (tagged, so a UI filter finds the costly steps)."""

    @property
    def op_tags(self) -> dict[str, str]:
        return {
            "veranda/phase": self.name,
            "veranda/timeout_s": str(int(self.timeout_s)),
            "veranda/model_phase": "true" if self.model else "false",
        }

    @property
    def tags(self) -> dict[str, str]:
        return {"veranda/stage": self.group, "veranda/model": "true" if self.model else "false"}


_WORK_ATTEMPT_S = AGENT_TURN_S + VALIDATION_TIMEOUT_S

PHASES: dict[str, PhaseSpec] = {
    spec.name: spec
    for spec in [
        PhaseSpec("ticket", "intake", 120.0, _api_retry(), frozenset({"linear", "slack"})),
        PhaseSpec(
            "repo_guess", "intake", 600.0, _model_retry(30), frozenset({"python"}), model=True
        ),
        PhaseSpec(
            "context_pack",
            "context",
            GIT_AND_API_S + 900.0 + AGENT_TURN_S,
            _model_retry(60),
            frozenset({"github", "git"}),
            model=True,
        ),
        PhaseSpec(
            "red_tests",
            "build",
            GIT_AND_API_S + MAX_RED_TEST_ATTEMPTS * _WORK_ATTEMPT_S,
            _model_retry(),
            frozenset({"git"}),
            model=True,
        ),
        PhaseSpec(
            "patch",
            "build",
            GIT_AND_API_S + MAX_PATCH_ATTEMPTS * _WORK_ATTEMPT_S + AGENT_TURN_S,
            _model_retry(),
            frozenset({"git"}),
            model=True,
        ),
        PhaseSpec("pull_request", "deliver", GIT_AND_API_S, _api_retry(), frozenset({"github"})),
        PhaseSpec(
            "review_rounds",
            "deliver",
            GIT_AND_API_S + MAX_REVIEW_ROUNDS * 2 * AGENT_TURN_S,
            _model_retry(),
            frozenset({"github"}),
            model=True,
        ),
        PhaseSpec(
            "ci_outcome",
            "deliver",
            CI_WAIT_TIMEOUT_S * (1 + MAX_CI_REPAIRS) + MAX_CI_REPAIRS * _WORK_ATTEMPT_S,
            _model_retry(60),
            frozenset({"github"}),
            model=True,
        ),
        PhaseSpec(
            "feedback",
            "deliver",
            GIT_AND_API_S + 2 * _WORK_ATTEMPT_S,
            _model_retry(),
            frozenset({"github"}),
            model=True,
        ),
    ]
}


def phase_asset(spec: PhaseSpec, description: str) -> Callable[[Callable[..., Any]], Any]:
    """``@dg.asset`` with everything a phase shares: the tickets partitions, its group, kinds,
    owner, tags, timeout and retry policy, so each asset module states only what differs."""
    from veranda_dagster.partitions import TICKETS

    return dg.asset(
        partitions_def=TICKETS,
        group_name=spec.group,
        kinds=spec.kinds,
        owners=[OWNER],
        tags=spec.tags,
        op_tags=spec.op_tags,
        retry_policy=spec.retry,
        description=description,
    )
