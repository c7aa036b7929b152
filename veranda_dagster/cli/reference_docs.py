"""``veranda reference-docs``: write (or ``--check``) the generated reference pages.

The configuration, secrets and vendor tables in ``docs/reference/`` are made from the code
(``veranda_dagster.reference.pages``); ``--check`` exits 1 naming each page that has drifted,
as the test of the same name does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_OUT = Path("docs/reference")
EXIT_DRIFTED = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the pages' folder")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when a page has drifted"
    )


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.reference.pages import drifted, render_all

    out: Path = args.out
    if args.check:
        stale = drifted(out)
        for name in stale:
            print(f"{out / name}: differs from the code; run `veranda reference-docs`")
        return EXIT_DRIFTED if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for name, text in render_all().items():
        (out / name).write_text(text)
        sys.stdout.write(f"wrote {out / name}\n")
    return 0
