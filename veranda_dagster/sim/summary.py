"""What a ticket's run left behind, read back from the instance and the fakes.

Per asset: the latest materialization of the ticket's partition and the metadata contract the
asset shell writes (``outcome``, ``duration_s``, ``model_calls``, ``usd``, ``tokens_in``,
``tokens_out``, ``backend``); then the PR, the CI verdict and the ticket comments. Used by
``veranda demo`` and the e2e tests, so both judge a run by what the product recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from veranda_dagster.domain.core.phases import PHASE_NAMES

ASSETS = PHASE_NAMES
"""Every phase asset, in lineage order."""


@dataclass
class AssetSummary:
    name: str
    status: str
    """``materialized`` or ``missing``."""
    outcome: str = ""
    duration_s: float = 0.0
    vendor: str = "none"
    model: str = "none"
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    usd: float = 0.0
    run_id: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunSummary:
    ticket: str
    assets: dict[str, AssetSummary] = field(default_factory=dict)
    pr_url: str = ""
    ci: str = ""
    comments: list[str] = field(default_factory=list)

    @property
    def model_calls_total(self) -> int:
        return sum(a.model_calls for a in self.assets.values())

    @property
    def usd_total(self) -> float:
        return round(sum(a.usd for a in self.assets.values()), 6)

    def as_json(self) -> dict[str, Any]:
        return {
            "ticket": self.ticket,
            "assets": {
                a.name: {
                    "status": a.status,
                    "outcome": a.outcome,
                    "model_calls": a.model_calls,
                    "usd": a.usd,
                }
                for a in self.assets.values()
            },
            "pr_url": self.pr_url,
            "ci": self.ci,
            "model_calls_total": self.model_calls_total,
        }


def _value(entry: Any) -> Any:
    return getattr(entry, "value", entry)


def asset_summary(instance: dg.DagsterInstance, name: str, partition: str) -> AssetSummary:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(name), asset_partitions=[partition]), limit=1
    ).records
    if not records:
        return AssetSummary(name, "missing")
    event = records[0]
    mat = event.asset_materialization
    meta = {k: _value(v) for k, v in ((mat.metadata if mat else None) or {}).items()}
    return AssetSummary(
        name=name,
        status="materialized",
        outcome=str(meta.get("outcome", "")),
        duration_s=float(meta.get("duration_s", 0.0) or 0.0),
        vendor=str(meta.get("backend", "none")),
        model=str(meta.get("model", "none")),
        model_calls=int(meta.get("model_calls", 0) or 0),
        tokens_in=int(meta.get("tokens_in", 0) or 0),
        tokens_out=int(meta.get("tokens_out", 0) or 0),
        usd=round(float(meta.get("usd", 0.0) or 0.0), 6),
        run_id=event.run_id,
        meta=meta,
    )


def run_summary(
    instance: dg.DagsterInstance, partition: str, comments: list[str] | None = None
) -> RunSummary:
    summary = RunSummary(ticket=partition, comments=list(comments or []))
    for name in ASSETS:
        summary.assets[name] = asset_summary(instance, name, partition)
    summary.pr_url = str(summary.assets["pull_request"].meta.get("pr_url", ""))
    ci = summary.assets.get("ci_outcome")
    summary.ci = ci.outcome if ci and ci.status == "materialized" else "missing"
    return summary


def asset_metadata_text(instance: dg.DagsterInstance, partition: str) -> str:
    """Every materialization's metadata for the partition, as text (for secret scans)."""
    parts: list[str] = []
    for name in ASSETS:
        result = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(name), asset_partitions=[partition]),
            limit=50,
        )
        for record in result.records:
            mat = record.asset_materialization
            meta = (mat.metadata if mat else None) or {}
            parts += [f"{name}.{k}={_value(v)!r}" for k, v in meta.items()]
    return "\n".join(parts)
