"""The phase registry: one Dagster-free spec per phase, from which everything else is derived.

A phase is named once, here: its asset key, its stored value type, its stage (the asset
group), whether it calls a model (and so how it retries), its wall-clock bound, the
phase-specific metadata keys it reports (a cross-process contract with ``ops/``), its metric
hook, and the commit trailer its commits carry. The asset policies (``assets._policy``), the
value-type table (``storage.types``), the metric labels (``ops.metrics``), the report and the
demo summary read this table, and ``tests/domain/core/test_phases.py`` fails when a phase is missing
a piece anywhere.

Each timeout is the wall-clock bound of one attempt, derived from the inner bounds it contains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from veranda_dagster.domain.core.bounds import (
    CI_WAIT_TIMEOUT_S,
    MAX_CI_REPAIRS,
    MAX_PATCH_ATTEMPTS,
    MAX_RED_TEST_ATTEMPTS,
    MAX_REVIEW_ROUNDS,
    VALIDATION_TIMEOUT_S,
)
from veranda_dagster.domain.core.models import (
    CIOutcome,
    ContextPack,
    Feedback,
    Patch,
    PullRequest,
    RedTests,
    RepoGuess,
    ReviewRounds,
    Ticket,
)

Stage = Literal["intake", "context", "build", "deliver"]
MetricHook = Literal["review_iterations", "coverage_delta", "ci_result"]
"""A phase-specific metric ``ops.metrics`` records from the phase's value (live) and from its
stored metadata (replayed across pods); ``ops`` implements each hook named here."""

AGENT_TURN_S = 1_800.0
"""One agent turn's own cap (``AgentRequest.timeout_s`` default)."""
GIT_AND_API_S = 300.0
"""A clone, a push or a handful of API calls (``workspace.GIT_TIMEOUT_S``)."""
WORK_ATTEMPT_S = AGENT_TURN_S + VALIDATION_TIMEOUT_S
"""One agent turn plus the validation of what it wrote."""

SHARED_METADATA = (
    "duration_s",
    "outcome",
    "model_calls",
    "usd",
    "tokens_in",
    "tokens_out",
)
"""Keys the asset shell writes on every phase's materialization (``assets._shell``)."""
CALL_METADATA = ("backend", "model", "tier", "reason")
"""The last model call's resolution, written only when the value made a call: a phase that
called no model shows no row rather than four rows of ``none``."""
SPEND_METADATA = (
    "ticket_spent_usd",
    "ticket_cap_usd",
    "org_spent_today_usd",
    "org_daily_cap_usd",
    "reused",
    "reused_calls",
    "reused_usd",
)
"""Keys the asset shell adds when it has them: the ticket's spend and cap from the ledger (a
phase with the pipeline), its org's when the org has a daily cap, and what a value reused from
an earlier run instead of paying again (``assets._shell``)."""
STORAGE_METADATA = ("stored_in", "stored_at")
"""Keys the value store's IO manager adds where it kept the value (``storage.io_manager``)."""


TRACKER = "tracker"
"""A phase's kind for "the ticket sources": the shell shows the configured ones."""

FORGE = "forge"
"""A phase's kind for "the forge": the shell shows the configured one."""


@dataclass(frozen=True)
class Retry:
    """How many times a failed attempt is retried and after how long (exponential, jittered)."""

    max_retries: int
    delay_s: float


API_RETRY = Retry(max_retries=3, delay_s=5)
"""API-only phases: a few quick retries (a git push, a ticket fetch)."""


def model_retry(delay_s: float = 120) -> Retry:
    """A model turn costs money and minutes: one retry, after a long backoff.
    ``VERANDA_MODEL_RETRY_DELAY_S`` replaces the delay of every phase that calls a model."""
    return Retry(max_retries=1, delay_s=delay_s)


@dataclass(frozen=True)
class Phase:
    name: str
    """The asset key, the metric label, the domain module's phase and the commit trailer."""
    value_type: type[BaseModel]
    stage: Stage
    timeout_s: float
    retry: Retry
    calls_model: bool = False
    """Whether the phase pays for model turns (tagged, so a UI filter finds the costly steps)."""
    kinds: frozenset[str] = field(default_factory=frozenset)
    """What the phase touches, as the UI shows it: ``TRACKER`` and ``FORGE`` stand for whichever
    ticket sources and forge a deployment configures (the Dagster shell names them)."""
    metadata: tuple[str, ...] = ()
    """The phase-specific metadata keys it reports, besides ``SHARED_METADATA``."""
    optional_metadata: tuple[str, ...] = ()
    """Declared keys written only when there is a value (coverage not measured, a ticket
    without a URL): absent rather than a sentinel such as -1."""
    metric: MetricHook | None = None
    old_trailers: tuple[str, ...] = ()
    """Trailer values this phase's commits carried before the names were unified; still read,
    so branches pushed before the rename keep their history."""

    @property
    def trailers(self) -> tuple[str, ...]:
        """Every ``Veranda-Phase`` value that marks this phase's commits (new name first)."""
        return (self.name, *self.old_trailers)

    @property
    def metadata_keys(self) -> frozenset[str]:
        return frozenset(
            (*SHARED_METADATA, *CALL_METADATA, *STORAGE_METADATA, *SPEND_METADATA, *self.metadata)
        )

    @property
    def optional_keys(self) -> frozenset[str]:
        """Declared keys a materialization may lack (``optional_metadata``, ``CALL_METADATA``,
        ``SPEND_METADATA``): a row with nothing to say is left out, never shown empty."""
        return frozenset((*self.optional_metadata, *CALL_METADATA, *SPEND_METADATA))


_PHASES = (
    Phase(
        "ticket",
        Ticket,
        "intake",
        120.0,
        API_RETRY,
        kinds=frozenset({TRACKER}),
        metadata=("source", "title", "labels", "url"),
        optional_metadata=("url",),
    ),
    Phase(
        "repo_guess",
        RepoGuess,
        "intake",
        600.0,
        model_retry(30),
        calls_model=True,
        kinds=frozenset({"python"}),
        metadata=(
            "repo",
            "confidence",
            "signal",
            "model_verdict",
            "candidates",
            "score",
            "decided_by",
            "evidence",
            "question_comment_id",
        ),
        optional_metadata=(
            "repo",
            "signal",
            "score",
            "decided_by",
            "evidence",
            "question_comment_id",
        ),
    ),
    Phase(
        "context_pack",
        ContextPack,
        "context",
        GIT_AND_API_S + 900.0 + AGENT_TURN_S,
        API_RETRY,  # clone, code search and files: no model turn
        kinds=frozenset({FORGE, "git"}),
        metadata=(
            "repo",
            "base_sha",
            "branch",
            "pack_bytes",
            "pack_files",
            "pack_searches",
            "searches_planned",
            "search_budget_wait_s",
            "search_index",
            "seeds",
            "citations",
            "layers",
            "refused_files",
            "refused",
            "unavailable_signals",
            "files",
        ),
        optional_metadata=("layers", "refused", "unavailable_signals"),
    ),
    Phase(
        "red_tests",
        RedTests,
        "build",
        GIT_AND_API_S + MAX_RED_TEST_ATTEMPTS * WORK_ATTEMPT_S,
        model_retry(),
        calls_model=True,
        kinds=frozenset({"git"}),
        metadata=(
            "commit_sha",
            "test_files",
            "attempts",
            "base_exit_code",
            "rejected",
            "base_run_s",
            "red_test_output",
        ),
        optional_metadata=("base_exit_code",),
    ),
    Phase(
        "patch",
        Patch,
        "build",
        GIT_AND_API_S + MAX_PATCH_ATTEMPTS * WORK_ATTEMPT_S + AGENT_TURN_S,
        model_retry(),
        calls_model=True,
        kinds=frozenset({"git"}),
        metric="coverage_delta",
        metadata=(
            "commit_sha",
            "files_changed",
            "attempts",
            "validation_commands",
            "extra_test_files",
            "coverage_before_pct",
            "coverage_after_pct",
            "validation",
        ),
        optional_metadata=("coverage_before_pct", "coverage_after_pct", "validation"),
    ),
    Phase(
        "pull_request",
        PullRequest,
        "deliver",
        GIT_AND_API_S,
        API_RETRY,
        kinds=frozenset({FORGE}),
        metadata=(
            "pr_url",
            "pr_number",
            "head_sha",
            "citations_resolved",
            "citations_flagged",
            "pr_body",
            "ticket_url",
        ),
        optional_metadata=("ticket_url",),
    ),
    Phase(
        "review_rounds",
        ReviewRounds,
        "deliver",
        GIT_AND_API_S + MAX_REVIEW_ROUNDS * 2 * AGENT_TURN_S,
        model_retry(),
        calls_model=True,
        kinds=frozenset({FORGE}),
        metric="review_iterations",
        old_trailers=("review",),
        metadata=("review_rounds", "findings", "head_sha", "verdicts"),
    ),
    Phase(
        "ci_outcome",
        CIOutcome,
        "deliver",
        CI_WAIT_TIMEOUT_S * (1 + MAX_CI_REPAIRS) + MAX_CI_REPAIRS * WORK_ATTEMPT_S,
        model_retry(60),
        calls_model=True,
        kinds=frozenset({FORGE}),
        metadata=(
            "ci_status",
            "head_sha",
            "checks",
            "repairs",
            "repair_grounding",
            "violations",
            "polls",
        ),
        optional_metadata=("repair_grounding",),
        metric="ci_result",
        old_trailers=("ci",),
    ),
    Phase(
        "feedback",
        Feedback,
        "deliver",
        GIT_AND_API_S + 2 * WORK_ATTEMPT_S,
        model_retry(),
        calls_model=True,
        kinds=frozenset({FORGE}),
        metadata=("feedback_rounds", "comments_processed", "head_sha"),
        optional_metadata=("head_sha",),
    ),
)

PHASES: dict[str, Phase] = {p.name: p for p in _PHASES}
"""Every phase, in lineage order."""
PHASE_NAMES: tuple[str, ...] = tuple(PHASES)


def phase(name: str) -> Phase:
    return PHASES[name]
