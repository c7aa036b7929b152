"""``veranda detect-repo``: the repository guess for one ticket, as one JSON object.

The output keys are a contract used by tests and evaluation scripts, so they are fixed here and
nothing else is printed on stdout. The model pass is best-effort: when no vendor is configured
or healthy, the deterministic guess is printed and stderr says why. Bad input files exit 2 with a
one-line error.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile

from veranda_dagster.cli.ticket_file import load_ticket
from veranda_dagster.domain.core.errors import InputError
from veranda_dagster.domain.core.models import RepoGuess, Ticket
from veranda_dagster.domain.intake.catalog import Catalog, load_catalog, merge_catalogs
from veranda_dagster.domain.intake.repo_detection import confirm_repo_guess, detect_repo

OUTPUT_KEYS = ("repo", "confidence", "signal", "decision", "candidates", "question")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog",
        required=True,
        action="append",
        help="CATALOG.json or .yaml of an org's repos; repeat it for a ticket several orgs may "
        "take (their catalogs are weighed together)",
    )
    parser.add_argument("--ticket", required=True, help="TICKET.json")
    parser.add_argument(
        "--no-model", action="store_true", help="skip the cheap-tier confirmation pass"
    )


def _with_model(guess: RepoGuess, ticket: Ticket, catalog: Catalog) -> RepoGuess:
    """Run the confirmation pass if a vendor is available; never fail the command over it."""
    try:
        from veranda_dagster.settings import setting
        from veranda_dagster.vendors.config import VendorsConfig
        from veranda_dagster.vendors.resolver import build_agent

        agent = build_agent(VendorsConfig.load(setting("VERANDA_VENDORS_FILE") or None))
    except Exception as exc:  # any failure to build an agent degrades to the deterministic guess
        print(f"detect-repo: no model pass ({type(exc).__name__}: {exc})", file=sys.stderr)
        return guess
    with tempfile.TemporaryDirectory(prefix="veranda-detect-") as workdir:
        try:
            confirmed = confirm_repo_guess(guess, ticket, catalog, agent, workdir)
        except Exception as exc:  # a vendor bug must not break the CLI contract
            print(f"detect-repo: model pass failed ({type(exc).__name__})", file=sys.stderr)
            return guess
    for note in confirmed.notes[len(guess.notes) :]:
        print(f"detect-repo: {note}", file=sys.stderr)
    return confirmed


def run(args: argparse.Namespace) -> int:
    try:
        catalog = merge_catalogs([load_catalog(path) for path in args.catalog])
        ticket = load_ticket(args.ticket)
    except InputError as exc:
        print(f"detect-repo: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    # with a model, a leader on weaker evidence proceeds for the cheap pass to confirm;
    # without one (--no-model) it asks
    guess = detect_repo(ticket, catalog, model=not args.no_model)
    if not args.no_model and guess.decision == "proceed":
        guess = _with_model(guess, ticket, catalog)
    print(json.dumps({key: getattr(guess, key) for key in OUTPUT_KEYS}))
    return 0
