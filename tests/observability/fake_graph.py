"""Test-only phase assets that write the asset shell's metadata contract, nothing else."""

from typing import Any

import dagster as dg

from veranda_dagster.partitions import TICKETS

# (phase, ticket) -> metadata; varied backends, reasons and a ticket with no model calls.
ROWS: dict[tuple[str, str], dict[str, Any]] = {
    ("repo_guess", "ENG-1"): dict(
        duration_s=2.5,
        outcome="proceed",
        model_calls=1,
        usd=0.0021,
        tokens_in=1200,
        tokens_out=80,
        backend="claude/api_key",
        model="claude-haiku",
        tier="cheap",
        reason="preferred",
    ),
    ("patch", "ENG-1"): dict(
        duration_s=812.25,
        outcome="green",
        model_calls=2,
        usd=0.61,
        tokens_in=60000,
        tokens_out=11000,
        backend="codex/api_key",
        model="gpt-5",
        tier="high",
        reason="fallback_quota",
        coverage_before=70.0,
        coverage_after=72.5,
    ),
    ("ci_outcome", "ENG-1"): dict(
        duration_s=300.0,
        outcome="success",
        model_calls=0,
        usd=0.0,
        tokens_in=0,
        tokens_out=0,
        backend="none",
        model="none",
        tier="none",
        reason="none",
        ci_status="success",
    ),
    ("repo_guess", "ENG-2"): dict(
        duration_s=1.75,
        outcome="ask",
        model_calls=1,
        usd=0.0015,
        tokens_in=900,
        tokens_out=40,
        backend="gemini/oauth",
        model="gemini-flash",
        tier="cheap",
        reason="fallback_auth",
    ),
    ("patch", "ENG-2"): dict(
        duration_s=640.0,
        outcome="validation_failed",
        model_calls=3,
        usd=1.27,
        tokens_in=90000,
        tokens_out=15000,
        backend="claude/api_key",
        model="claude-opus",
        tier="high",
        reason="preferred",
        coverage_before=-1.0,
        coverage_after=-1.0,
    ),
    ("ci_outcome", "ENG-2"): dict(
        duration_s=120.0,
        outcome="failure",
        model_calls=1,
        usd=0.2,
        tokens_in=5000,
        tokens_out=900,
        backend="claude/api_key",
        model="claude-opus",
        tier="high",
        reason="preferred",
        ci_status="failure",
    ),
}
TICKET_KEYS = sorted({t for _, t in ROWS})


def _asset(phase: str, deps: list[str]) -> dg.AssetsDefinition:
    @dg.asset(name=phase, partitions_def=TICKETS, deps=deps)
    def _phase(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        return dg.MaterializeResult(metadata=ROWS[(phase, context.partition_key)])

    return _phase


ASSETS = [
    _asset("repo_guess", []),
    _asset("patch", ["repo_guess"]),
    _asset("ci_outcome", ["patch"]),
]


def materialize_all(instance: dg.DagsterInstance) -> None:
    instance.add_dynamic_partitions(TICKETS.name, TICKET_KEYS)
    for key in TICKET_KEYS:
        result = dg.materialize(ASSETS, instance=instance, partition_key=key)
        assert result.success
