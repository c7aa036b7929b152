"""``veranda sim ticket|fault|status``: drive the world a running ``veranda dev`` keeps up.

``ticket "title" --body ...`` files a ticket in the fake Linear (the sensor picks it up);
``fault model-5xx|revoke-key|ci-red`` injects a fault (``sim.control`` says what each does);
``status`` prints the UI URL, the DAGSTER_HOME and what the fakes saw, as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import httpx

from veranda_dagster.cli.dev import default_state_path

CONTROL_TIMEOUT_S = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--state", help="the state file veranda dev wrote")
    sub = parser.add_subparsers(dest="action", required=True)
    ticket = sub.add_parser("ticket", help="file a ticket in the fake Linear")
    ticket.add_argument("title")
    ticket.add_argument("--body", default="", help="the ticket's description (Markdown)")
    fault = sub.add_parser("fault", help="inject a fault into the running world")
    fault.add_argument("kind", choices=("model-5xx", "revoke-key", "ci-red"))
    fault.add_argument("--role", help="model-5xx: the seat whose calls fail (implementer)")
    fault.add_argument("--times", type=int, help="model-5xx: how many calls fail (2)")
    fault.add_argument("--key", help="revoke-key: which SIM_* key (the agent's own)")
    sub.add_parser("status", help="print the running world's addresses and counters")


def _control(state: Path) -> str:
    try:
        return str(json.loads(state.read_text())["control_url"])
    except (OSError, ValueError, KeyError):
        raise SystemExit(
            f"sim: no running veranda dev found ({state}); start one: veranda dev"
        ) from None


def run(args: argparse.Namespace) -> int:
    state = Path(args.state) if args.state else default_state_path()
    base = _control(state)
    payload: dict[str, Any]
    try:
        if args.action == "ticket":
            payload = {"title": args.title, "body": args.body}
            response = httpx.post(f"{base}/tickets", json=payload, timeout=CONTROL_TIMEOUT_S)
        elif args.action == "fault":
            payload = {"kind": args.kind, "role": args.role, "times": args.times, "key": args.key}
            payload = {k: v for k, v in payload.items() if v is not None}
            response = httpx.post(f"{base}/faults", json=payload, timeout=CONTROL_TIMEOUT_S)
        else:
            response = httpx.get(f"{base}/state", timeout=CONTROL_TIMEOUT_S)
    except httpx.HTTPError as exc:
        sys.stderr.write(f"sim: veranda dev at {base} did not answer: {exc}\n")
        return 1
    body = response.json()
    if response.status_code >= 400:
        sys.stderr.write(f"sim: {body.get('error', response.text)}\n")
        return 2
    if args.action == "ticket":
        sys.stdout.write(f"filed {body['identifier']}: {body['url']}\n")
    else:
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
    return 0
