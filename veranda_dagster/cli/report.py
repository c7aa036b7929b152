"""``veranda report [--since DATE] [--json]``: cost, tokens, resolutions and outcomes per
ticket and in total, read from the Dagster instance ``DAGSTER_HOME`` points at."""

from __future__ import annotations

import argparse
import json
import sys

from veranda_dagster.cli.instance_home import check_dagster_home
from veranda_dagster.domain.core.errors import VerandaError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", help="only materializations after this date (YYYY-MM-DD)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    import dagster as dg

    from veranda_dagster.observability.report import parse_since, render_text, report_from_instance
    from veranda_dagster.storage.ledger import ledger_from_env

    try:
        since = parse_since(args.since)
        check_dagster_home()
        # the ledger is all-time: beside a --since window it would not add up
        billed = None if since is not None else ledger_from_env().spent
        with dg.DagsterInstance.get() as instance:
            report = report_from_instance(instance, since, billed)
    except VerandaError as exc:
        print(f"veranda report: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        sys.stdout.write(render_text(report))
    return 0
