"""``veranda report``: each run treated as data, read back from the instance.

Totals are sums of the stored materialization metadata, so the report and the Dagster UI
cannot disagree. A phase's ``usd`` is what that attempt paid (work it reused from an earlier run
is not counted again), so a phase materialized twice for one ticket (a re-execution, a
backfill) is counted twice only for what each attempt really paid.

Given the spend ledger (``billed``), each ticket also shows ``billed_usd``, what the vendors
billed as each turn's proxy metered it, and ``not_materialized_usd``, the part of it no
materialization reports: attempts that failed or were stopped at a cap after paying (their
phase stored no value). ``usd + not_materialized_usd == billed_usd``, to the micro-dollar.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import dagster as dg

from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.observability.materializations import PhaseRecord, read_phase_records


def parse_since(text: str | None) -> float | None:
    """``2026-12-01`` or an ISO timestamp (UTC unless it says otherwise) -> epoch seconds."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"--since {text!r} is not a date (YYYY-MM-DD or ISO 8601)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _bucket() -> dict[str, Any]:
    return {
        "usd": 0.0,
        "tokens_in": 0,
        "tokens_out": 0,
        "model_calls": 0,
        "materializations": 0,
        "resolutions": Counter(),
        "phase_seconds": defaultdict(float),
        "outcomes": {},
    }


def _add(bucket: dict[str, Any], rec: PhaseRecord) -> None:
    bucket["usd"] += rec.num("usd")
    bucket["tokens_in"] += int(rec.num("tokens_in"))
    bucket["tokens_out"] += int(rec.num("tokens_out"))
    bucket["model_calls"] += int(rec.num("model_calls"))
    bucket["materializations"] += 1
    bucket["phase_seconds"][rec.phase] += rec.num("duration_s")
    if rec.text("backend") != "none":
        bucket["resolutions"][f"{rec.text('backend')} {rec.text('reason')}"] += 1


def _plain(bucket: dict[str, Any]) -> dict[str, Any]:
    return {
        **bucket,
        "usd": round(bucket["usd"], 6),
        "resolutions": dict(sorted(bucket["resolutions"].items())),
        "phase_seconds": {k: round(v, 3) for k, v in bucket["phase_seconds"].items()},
    }


def build_report(
    records: list[PhaseRecord], billed: Callable[[str], float] | None = None
) -> dict[str, Any]:
    """One object: ``tickets`` (per partition) and ``total``, plus resolution reasons;
    ``billed``: a ticket's total in the spend ledger (each ticket then shows it)."""
    tickets: dict[str, dict[str, Any]] = {}
    total = _bucket()
    reasons: Counter[str] = Counter()
    for rec in records:
        key = rec.partition or "(unpartitioned)"
        bucket = tickets.setdefault(key, _bucket())
        _add(bucket, rec)
        _add(total, rec)
        bucket["outcomes"][rec.phase] = rec.text("outcome")  # the latest attempt wins
        if rec.text("backend") != "none":
            reasons[rec.text("reason")] += 1
    out_total = _plain(total)
    out_total.pop("outcomes")
    out_total["tickets"] = len(tickets)
    plain = {k: _plain(v) for k, v in sorted(tickets.items())}
    if billed is not None:
        for key, bucket in plain.items():
            bucket["billed_usd"] = round(billed(key), 6)
            bucket["not_materialized_usd"] = round(bucket["billed_usd"] - bucket["usd"], 6)
        out_total["billed_usd"] = round(sum(b["billed_usd"] for b in plain.values()), 6)
    return {
        "tickets": plain,
        "total": out_total,
        "resolutions_by_reason": dict(sorted(reasons.items())),
    }


def report_from_instance(
    instance: dg.DagsterInstance,
    since: float | None,
    billed: Callable[[str], float] | None = None,
) -> dict[str, Any]:
    return build_report(read_phase_records(instance, since=since), billed)


def render_text(report: dict[str, Any]) -> str:
    lines: list[str] = []
    for key, t in report["tickets"].items():
        lines.append(
            f"{key}: ${t['usd']:.4f}  tokens {t['tokens_in']} in / {t['tokens_out']} out  "
            f"calls {t['model_calls']}"
        )
        if "billed_usd" in t:
            lines.append(
                f"  billed ${t['billed_usd']:.4f} (ledger), of which "
                f"${t['not_materialized_usd']:.4f} by attempts that stored no value"
            )
        for phase, secs in t["phase_seconds"].items():
            lines.append(f"  {phase:<14} {secs:>9.1f} s  {t['outcomes'].get(phase, '')}")
        for res, n in t["resolutions"].items():
            lines.append(f"  vendor {res} x{n}")
    tot = report["total"]
    lines.append(
        f"TOTAL {tot['tickets']} tickets: ${tot['usd']:.4f}  tokens {tot['tokens_in']} in / "
        f"{tot['tokens_out']} out  calls {tot['model_calls']}"
    )
    for reason, n in report["resolutions_by_reason"].items():
        lines.append(f"  resolutions {reason}: {n}")
    return "\n".join(lines) + "\n"
