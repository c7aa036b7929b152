"""``veranda pack``: the bounded context pack for a ticket, over a local clone, as one JSON object.

A stable contract for tests and the retrieval benchmark:
``{"seeds", "searches", "bytes", "files": [{"path", "windows": [{"start", "end", "text"}]}],
"citations": [{"id", "path", "start", "end", "sha"}]}``. The local search index (``git grep`` at
HEAD) is used and no model is called, so ``--no-model`` is accepted for symmetry with
``detect-repo`` and changes nothing. Bad input exits 2 with one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from veranda_dagster.domain.core.bounds import MAX_DOSSIER_BYTES
from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.domain.core.input_files import read_input_text

NEEDS_PLUGINS = False
"""The pack reads a ticket file and a clone: no vendor, source or forge plugin, so the CLI
skips loading them (and Dagster and the HTTP client with them: about a second of CPU of a pack
that costs two)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-dir", required=True, help="a git clone to search at HEAD")
    parser.add_argument("--ticket", required=True, help="TICKET.json (the intake ticket shape)")
    parser.add_argument(
        "--dossier", action="append", default=[], help="an expert dossier (text); repeatable"
    )
    parser.add_argument("--no-model", action="store_true", help="no model is used (default)")


def _fail(message: str) -> int:
    print(f"veranda pack: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.cli.ticket_file import load_ticket
    from veranda_dagster.domain.context.pack import build_local_pack

    repo_dir = Path(args.repo_dir)
    if not repo_dir.is_dir():
        return _fail(f"--repo-dir {repo_dir} is not a directory")
    if not (repo_dir / ".git").exists() and not (repo_dir / "HEAD").is_file():
        return _fail(f"--repo-dir {repo_dir} is not a git repository")
    try:
        ticket = load_ticket(args.ticket, what="--ticket")
        dossiers = [
            read_input_text(path, what="--dossier", max_bytes=MAX_DOSSIER_BYTES)
            for path in args.dossier
        ]
        result = build_local_pack(repo_dir, ticket, dossiers)
    except VerandaError as exc:
        return _fail(str(exc))
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
