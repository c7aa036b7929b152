"""``veranda pack``: the bounded context pack for a ticket, over a local clone, as one JSON object.

A stable contract for tests and the retrieval benchmark:
``{"seeds", "searches", "bytes", "files": [{"path", "windows": [{"start", "end", "text"}]}],
"citations": [{"id", "path", "start", "end", "sha"}]}``. The local backend (``git grep`` at
HEAD) is used and no model is called, so ``--no-model`` is accepted for symmetry with
``detect-repo`` and changes nothing. Bad input exits 2 with one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from veranda_dagster.domain.errors import VerandaError


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
    from veranda_dagster.domain.context import build_local_pack
    from veranda_dagster.domain.models import Ticket

    repo_dir = Path(args.repo_dir)
    if not (repo_dir / ".git").exists() and not (repo_dir / "HEAD").is_file():
        return _fail(f"--repo-dir {repo_dir} is not a git repository")
    try:
        raw = json.loads(Path(args.ticket).read_text(encoding="utf-8"))
        ticket = Ticket.model_validate(raw)
    except OSError as exc:
        return _fail(f"cannot read --ticket {args.ticket}: {exc.strerror or exc}")
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "ticket"
            return _fail(f"--ticket {args.ticket}: field {where!r}: {first['msg']}")
        return _fail(f"--ticket {args.ticket} is not valid JSON: {exc}")
    dossiers: list[str] = []
    for path in args.dossier:
        try:
            dossiers.append(Path(path).read_text(encoding="utf-8", errors="replace"))
        except OSError as exc:
            return _fail(f"cannot read --dossier {path}: {exc.strerror or exc}")
    try:
        result = build_local_pack(repo_dir, ticket, dossiers)
    except VerandaError as exc:
        return _fail(str(exc))
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
