"""``veranda vendors [--json] [--config PATH]``: probe every configured vendor for real.

Each vendor gets its cheap, model-free probe (in parallel, each bounded by the probe timeout);
the output is every verdict and the resolution order a turn would follow now. Exit 0 when at
least one vendor can serve, 1 when none can.
"""

from __future__ import annotations

import argparse
import json
from typing import TypedDict

from veranda_dagster.vendors.config import VendorsConfig
from veranda_dagster.vendors.resolver import build_agent


class VendorRow(TypedDict):
    vendor: str
    mode: str
    binary: str | None
    verdict: str
    detail: str
    rule: str | None


class VendorsReport(TypedDict):
    """What ``--json`` prints: every verdict and the order a turn would follow now."""

    vendors: list[VendorRow]
    resolution_order: list[str]
    instruction_files: list[str]
    mcp_formats: list[str]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--config",
        default=None,
        help="vendors config (JSON/YAML); default $VERANDA_VENDORS_CONFIG",
    )


def report(config: VendorsConfig) -> VendorsReport:
    agent = build_agent(config)
    verdicts = agent.probe_all()
    rows: list[VendorRow] = [
        {
            "vendor": b.vendor,
            "mode": b.mode,
            "binary": getattr(b, "binary", None),
            "verdict": v.verdict,
            "detail": v.detail,
            "rule": v.rule,
        }
        for b, v in zip(agent.vendors, verdicts, strict=True)
    ]
    order = [f"{r['vendor']}/{r['mode']}" for r in rows if r["verdict"] == "ok"]
    return {
        "vendors": rows,
        "resolution_order": order,
        "instruction_files": agent.instruction_files(),
        "mcp_formats": agent.mcp_formats(),
    }


def run(args: argparse.Namespace) -> int:
    data = report(VendorsConfig.load(args.config))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        for row in data["vendors"]:
            name = f"{row['vendor']}/{row['mode']}"
            detail = f"  {row['detail']}" if row["detail"] else ""
            print(f"{name:<18} {row['verdict']:<12}{detail}")
        order = data["resolution_order"] or ["(none: no vendor can serve)"]
        print("resolution order: " + " -> ".join(order))
    return 0 if data["resolution_order"] else 1
