"""``patch``: the implementation that turns the red tests green, validated by the repo's own
build, lint and test commands, plus a separate test-writer seat's extra tests."""

import dagster as dg

from veranda_dagster.assets._metadata import bounded_md
from veranda_dagster.assets._policy import PHASES, phase_asset
from veranda_dagster.assets._shell import run_phase
from veranda_dagster.domain.models import ContextPack, Patch, RedTests, Ticket
from veranda_dagster.resources.pipeline import PipelineResource

SPEC = PHASES["patch"]


def coverage(p: Patch) -> dict[str, float]:
    """Line coverage in percent, before and after; absent (not -1) when not measured."""
    out = {}
    if p.coverage_before is not None:
        out["coverage_before_pct"] = float(p.coverage_before)
    if p.coverage_after is not None:
        out["coverage_after_pct"] = float(p.coverage_after)
    return out


@phase_asset(
    SPEC,
    "Implementer turns the red tests green with build/lint/test passing; then a separate "
    "test-writer seat adds tests. Committed and pushed on the ticket branch.",
)
def patch(
    context: dg.AssetExecutionContext,
    pipeline: PipelineResource,
    ticket: Ticket,
    context_pack: ContextPack,
    red_tests: RedTests,
) -> dg.Output[Patch]:
    return run_phase(
        context,
        SPEC,
        lambda: pipeline.implement(ticket, context_pack, red_tests),
        lambda p: "green" if all(c.ok for c in p.validation) else "validation_failed",
        lambda p: {
            "commit_sha": p.commit_sha,
            "files_changed": len(p.files_changed),
            "attempts": p.attempts,
            "validation_commands": len(p.validation),
            "extra_test_files": len(p.extra_test_files),
            **coverage(p),
            "validation": bounded_md(
                "\n".join(
                    f"- `{c.command}`: {'ok' if c.ok else 'failed'} ({c.duration_s:.1f} s)"
                    for c in p.validation
                )
                or "none"
            ),
        },
    )
