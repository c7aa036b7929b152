"""``veranda sim ticket|fault|notes|status``: drive the world a running ``veranda dev`` keeps up.

``ticket "title" --body ...`` files a ticket in the fake Linear (the sensor picks it up);
``fault model-5xx|revoke-key|ci-red`` injects a fault (``sim.control`` says what each does);
``notes [KEY]`` prints what the product posted on each fake ticket (a failure's note among
them); ``status`` prints the UI URL, the DAGSTER_HOME and what the fakes saw, as JSON.
Several ``veranda dev`` may run: ``--ui URL`` picks one, else the newest, said on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Final

import httpx

from veranda_dagster.cli.dev_state import STATE_ENV, find_dev

CONTROL_TIMEOUT_S: Final = 10.0
"""One request to the simulation's control endpoint on loopback: it answers in
milliseconds, so ten seconds means it is not running (or hung), said as an error."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state", help=f"the state file veranda dev wrote (default: ${STATE_ENV}, else found)"
    )
    parser.add_argument(
        "--ui", help="the veranda dev to drive, by its Dagster UI URL (when several run)"
    )
    sub = parser.add_subparsers(dest="action", required=True)
    ticket = sub.add_parser("ticket", help="file a ticket in the fake Linear")
    ticket.add_argument("title", help="the ticket's title (quote it)")
    ticket.add_argument("--body", default="", help="the ticket's description (Markdown)")
    fault = sub.add_parser("fault", help="inject a fault into the running world")
    fault.add_argument(
        "kind",
        choices=("model-5xx", "revoke-key", "ci-red"),
        help="model-5xx: the model answers 500; revoke-key: the agent's key stops working; "
        "ci-red: the next CI run fails",
    )
    fault.add_argument("--role", help="model-5xx: the seat whose calls fail (implementer)")
    fault.add_argument("--times", type=int, help="model-5xx: how many calls fail (2)")
    fault.add_argument("--key", help="revoke-key: which SIM_* key (the agent's own)")
    notes = sub.add_parser("notes", help="print what the product posted on the fake tickets")
    notes.add_argument("key", nargs="?", help="one ticket (e.g. ENG-101); default: every one")
    sub.add_parser("status", help="print the running world's addresses and counters")


def run(args: argparse.Namespace) -> int:
    dev, note = find_dev(args.state, args.ui)
    if note:
        sys.stderr.write(f"sim: {note}\n")
    if not dev.control_url:
        sys.stderr.write(f"sim: veranda dev at {dev.ui_url} is still starting; try again\n")
        return 1
    base = dev.control_url
    payload: dict[str, Any]
    try:
        if args.action == "ticket":
            payload = {"title": args.title, "body": args.body}
            response = httpx.post(f"{base}/tickets", json=payload, timeout=CONTROL_TIMEOUT_S)
        elif args.action == "fault":
            payload = {"kind": args.kind, "role": args.role, "times": args.times, "key": args.key}
            payload = {k: v for k, v in payload.items() if v is not None}
            response = httpx.post(f"{base}/faults", json=payload, timeout=CONTROL_TIMEOUT_S)
        elif args.action == "notes":
            params = {"key": args.key} if args.key else {}
            response = httpx.get(f"{base}/notes", params=params, timeout=CONTROL_TIMEOUT_S)
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
    elif args.action == "notes":
        sys.stdout.write(notes_text(body))
    else:
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
    return 0


def notes_text(body: dict[str, Any]) -> str:
    """Each ticket's title and the product's comments on it, for a person."""
    lines: list[str] = []
    for key, ticket in body.items():
        lines.append(f"{key}: {ticket.get('title', '')} ({ticket.get('url', '')})")
        comments = ticket.get("notes") or []
        if not comments:
            lines.append("  (no comment from veranda yet)")
        for comment in comments:
            lines.append("  - " + str(comment).strip().replace("\n", "\n    "))
    return "\n".join(lines) + "\n" if lines else "no tickets filed yet\n"
