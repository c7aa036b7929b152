"""Test-only phase assets that write the asset shell's metadata contract, nothing else."""

from typing import Any

import dagster as dg

from veranda_dagster.domain.core.phases import CALL_METADATA, SHARED_METADATA
from veranda_dagster.partitions import TICKETS

# Six materializations: varied vendors, reasons and a ticket with no model calls.
# (phase, ticket) -> duration_s, outcome, model_calls, usd, tokens_in, tokens_out
SPEND: dict[tuple[str, str], tuple[float, str, int, float, int, int]] = {
    ("repo_guess", "ENG-1"): (2.5, "proceed", 1, 0.0021, 1200, 80),
    ("patch", "ENG-1"): (812.25, "green", 2, 0.61, 60000, 11000),
    ("ci_outcome", "ENG-1"): (300.0, "success", 0, 0.0, 0, 0),
    ("repo_guess", "ENG-2"): (1.75, "ask", 1, 0.0015, 900, 40),
    ("patch", "ENG-2"): (640.0, "validation_failed", 3, 1.27, 90000, 15000),
    ("ci_outcome", "ENG-2"): (120.0, "failure", 1, 0.2, 5000, 900),
}
# (phase, ticket) -> the last call's vendor, model, tier, reason (none: no call, no rows)
RESOLVED: dict[tuple[str, str], tuple[str, str, str, str] | tuple[()]] = {
    ("repo_guess", "ENG-1"): ("claude/api_key", "claude-haiku", "cheap", "preferred"),
    ("patch", "ENG-1"): ("codex/api_key", "gpt-5", "high", "fallback_quota"),
    ("ci_outcome", "ENG-1"): (),
    ("repo_guess", "ENG-2"): ("gemini/oauth", "gemini-flash", "cheap", "fallback_auth"),
    ("patch", "ENG-2"): ("claude/api_key", "claude-opus", "high", "preferred"),
    ("ci_outcome", "ENG-2"): ("claude/api_key", "claude-opus", "high", "preferred"),
}
# (phase, ticket) -> the phase's own keys
OWN: dict[tuple[str, str], dict[str, Any]] = {
    ("patch", "ENG-1"): {"coverage_before": 70.0, "coverage_after": 72.5},
    ("ci_outcome", "ENG-1"): {"ci_status": "success"},
    ("patch", "ENG-2"): {"coverage_before": -1.0, "coverage_after": -1.0},
    ("ci_outcome", "ENG-2"): {"ci_status": "failure"},
}
ROWS: dict[tuple[str, str], dict[str, Any]] = {
    key: {
        **dict(zip(SHARED_METADATA, spend, strict=True)),
        **dict(zip(CALL_METADATA, RESOLVED[key], strict=False)),
        **OWN.get(key, {}),
    }
    for key, spend in SPEND.items()
}
"""(phase, ticket) -> the metadata the shell writes: its shared keys, in the order the contract
names them (``SHARED_METADATA``), the last call's resolution when there was a call
(``CALL_METADATA``), then the phase's own."""
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
    assert TICKETS.name is not None
    instance.add_dynamic_partitions(TICKETS.name, TICKET_KEYS)
    for key in TICKET_KEYS:
        result = dg.materialize(ASSETS, instance=instance, partition_key=key)
        assert result.success
