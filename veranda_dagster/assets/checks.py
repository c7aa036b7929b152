"""Asset checks: properties a phase value must have, read back from the stored value only.

Reading the store (not the in-memory output) checks what a downstream phase in another process
will actually load.
"""

import re
import warnings
from collections.abc import Callable
from typing import Any, cast

import dagster as dg

from veranda_dagster.domain.core.bounds import MAX_PACK_BYTES, MAX_PACK_FILES, MAX_SEARCHES
from veranda_dagster.domain.core.models import ContextPack, PullRequest, RedTests
from veranda_dagster.partitions import TICKETS
from veranda_dagster.storage import ValueStore

_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def _check(
    asset: str, description: str, *, blocking: bool = True
) -> Callable[[Any], dg.AssetChecksDefinition]:
    """``dg.asset_check`` on the tickets partitions; partitioned checks are a Dagster preview
    feature, whose warning is silenced here once instead of on every import.

    A check is ``blocking`` unless said otherwise: when it fails (severity ERROR), the assets
    downstream of its asset do not run in the same run, so ``patch`` never starts on a pack out
    of bounds or on red tests that were not red. Blocking works with partitioned checks on the
    pinned Dagster (tests/assets/test_blocking_checks.py)."""

    def decorate(fn: Any) -> dg.AssetChecksDefinition:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dg.PreviewWarning)
            return dg.asset_check(
                asset=asset, partitions_def=TICKETS, description=description, blocking=blocking
            )(fn)

    return decorate


def _stored(store: ValueStore, asset: str, context: dg.AssetCheckExecutionContext) -> object:
    return store.load(asset, context.partition_key)


@_check(
    "context_pack",
    f"The pack is within {MAX_SEARCHES} searches, {MAX_PACK_FILES} files and "
    f"{MAX_PACK_BYTES:,} bytes (declared and counted).",
)
def pack_within_bounds(
    context: dg.AssetCheckExecutionContext, value_store: ValueStore
) -> dg.AssetCheckResult:
    pack = cast(ContextPack, _stored(value_store, "context_pack", context))
    counted = sum(len(w.text.encode()) for f in pack.files for w in f.windows)
    problems = [
        f"{name} {value} > {bound}"
        for name, value, bound in [
            ("bytes", pack.bytes, MAX_PACK_BYTES),
            ("counted_bytes", counted, MAX_PACK_BYTES),
            ("files", len(pack.files), MAX_PACK_FILES),
            ("searches", pack.searches, MAX_SEARCHES),
        ]
        if value > bound
    ]
    return dg.AssetCheckResult(
        passed=not problems,
        description="; ".join(problems) or "within bounds",
        metadata={
            "pack_bytes": pack.bytes,
            "counted_bytes": counted,
            "pack_files": len(pack.files),
            "pack_searches": pack.searches,
        },
    )


@_check(
    "context_pack", "Every citation the agent may use names a commit sha and a valid line range."
)
def pack_citations_valid(
    context: dg.AssetCheckExecutionContext, value_store: ValueStore
) -> dg.AssetCheckResult:
    pack = cast(ContextPack, _stored(value_store, "context_pack", context))
    bad = [
        c.id
        for c in pack.citations
        if not _SHA.match(c.sha) or c.start < 1 or c.end < c.start or not c.path
    ]
    return dg.AssetCheckResult(
        passed=not bad,
        description=f"invalid citations: {', '.join(bad[:10])}" if bad else "all valid",
        metadata={"citations": len(pack.citations), "invalid": len(bad)},
    )


@_check("red_tests", "The red tests really failed on the base commit (non-zero exit, no timeout).")
def red_tests_fail_on_base(
    context: dg.AssetCheckExecutionContext, value_store: ValueStore
) -> dg.AssetCheckResult:
    red = cast(RedTests, _stored(value_store, "red_tests", context))
    run = red.base_run
    failed = run.exit_code is not None and run.exit_code != 0 and not run.timed_out
    return dg.AssetCheckResult(
        passed=failed,
        description=f"base run of {run.command!r}: exit {run.exit_code}, timed_out={run.timed_out}",
        metadata={} if run.exit_code is None else {"base_exit_code": run.exit_code},
    )


@_check(
    "pull_request",
    "No citation in the PR body failed to resolve against the default branch.",
    blocking=False,  # a warning for the reviewer: the PR is already open
)
def pull_request_citations_resolve(
    context: dg.AssetCheckExecutionContext, value_store: ValueStore
) -> dg.AssetCheckResult:
    pr = cast(PullRequest, _stored(value_store, "pull_request", context))
    flagged = pr.citations_flagged
    return dg.AssetCheckResult(
        passed=not flagged,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"flagged: {', '.join(flagged[:10])}" if flagged else "all citations resolve",
        metadata={"resolved": len(pr.citations_resolved), "flagged": len(flagged)},
    )


CHECKS = [
    pack_within_bounds,
    pack_citations_valid,
    red_tests_fail_on_base,
    pull_request_citations_resolve,
]
