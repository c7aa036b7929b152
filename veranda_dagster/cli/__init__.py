"""The ``veranda`` command: a table of subcommands, each in its own module, imported lazily.

A subcommand module exposes ``add_arguments(parser)`` and ``run(args) -> int``. Lazy import keeps
``veranda detect-repo`` from paying for Dagster's import time. The plugins are loaded (and with
them Dagster and the HTTP client, about a second of CPU) only for a command that uses them: one
that reads none (``veranda pack``) says ``NEEDS_PLUGINS = False``. Whatever a subcommand raises on
bad input (a typed product error, an unreadable file, a bad ``DAGSTER_HOME``) is one line on
stderr and exit 2, never a traceback; ``--debug`` (anywhere on the line, or ``VERANDA_DEBUG=1``)
shows the traceback too.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from typing import NoReturn

COMMANDS: dict[str, tuple[str, str]] = {
    "dev": ("veranda_dagster.cli.dev", "the product in the Dagster UI against a loopback world"),
    "sim": ("veranda_dagster.cli.sim", "file tickets and inject faults into veranda dev"),
    "vendors": ("veranda_dagster.cli.vendors", "probe every configured vendor's CLI"),
    "backends": ("veranda_dagster.cli.vendors", "the former name of `veranda vendors`"),
    "detect-repo": ("veranda_dagster.cli.detect_repo", "infer the repository for a ticket"),
    "catalog": ("veranda_dagster.cli.catalog", "build an org's repository catalog from its forge"),
    "pack": ("veranda_dagster.cli.pack", "build the bounded context pack for a ticket"),
    "demo": ("veranda_dagster.cli.demo", "run the whole pipeline against loopback fakes"),
    "report": ("veranda_dagster.cli.report", "cost, tokens and outcomes from the instance"),
    "budget": ("veranda_dagster.cli.budget", "a ticket's spend per phase; raise its cap alone"),
    "intake": ("veranda_dagster.cli.intake", "serve the push intake: signed webhooks -> runs"),
    "serve-ops": ("veranda_dagster.cli.serve_ops", "serve /healthz, /readyz and /metrics"),
    "mcp-observability": ("veranda_dagster.cli.mcp_observability", "the agents' MCP server"),
    "reference-docs": ("veranda_dagster.cli.reference_docs", "write docs/reference from the code"),
}
ALIASES: dict[str, str] = {"backends": "vendors"}
"""Former command names kept because scripts call them (a public contract): alias -> name.
One name per concept: a *vendor* is the plugin for a coding-agent CLI (``vendors/``)."""
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1
DEBUG_FLAG = "--debug"
DEBUG_ENV = "VERANDA_DEBUG"
DESCRIPTION = """\
veranda: an autonomous coding agent run as a Dagster service, one ticket a partition:
ticket -> repository -> context -> red tests -> patch -> pull request -> review -> CI."""
EPILOG = """\
start here:
  veranda dev      the whole product in the Dagster UI against loopback fakes (no keys)
  veranda demo     one ticket end to end in the terminal, then a summary
then, in another shell while veranda dev runs:
  veranda sim ticket "Fix the retry bug" --body "repo: acme/billing"
'veranda COMMAND --help' for a command's options; --debug anywhere shows tracebacks."""
MAX_ERROR_LINE_CHARS = 500
"""An error line is for a person: past this it is cut (a payload echoed back is not help)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (argparse prints usage, then the error)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_ERROR_LINE_CHARS else line[: MAX_ERROR_LINE_CHARS - 1] + "…"


def _is_bad_input(exc: BaseException) -> bool:
    """Errors that mean the input (a file, a flag, the environment) is wrong, not the code."""
    from veranda_dagster.domain.core.errors import VerandaError

    if isinstance(exc, VerandaError | OSError | ValueError | RecursionError | UnicodeError):
        return True
    return type(exc).__module__.split(".")[0] in ("dagster", "yaml", "pydantic_core")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in argv or os.environ.get(DEBUG_ENV) == "1"
    argv = [a for a in argv if a != DEBUG_FLAG]
    parser = OneLineParser(
        prog="veranda",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    if not argv or argv[0] not in COMMANDS:
        parser.parse_args(argv or ["--help"])
        return EXIT_BAD_INPUT
    name = argv[0]
    module = importlib.import_module(COMMANDS[name][0])
    cmd_parser = OneLineParser(prog=f"veranda {name}", description=COMMANDS[name][1])
    module.add_arguments(cmd_parser)
    args = cmd_parser.parse_args(argv[1:])
    try:
        if getattr(module, "NEEDS_PLUGINS", True):
            from veranda_dagster.plugins import load_plugins

            load_plugins()
        return int(module.run(args))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the CLI contract: one line, never a traceback unless asked
        if debug:
            traceback.print_exc()
        bad = _is_bad_input(exc)
        kind = "error" if bad else f"internal error ({type(exc).__name__})"
        hint = "" if bad or debug else f"; rerun with {DEBUG_FLAG} for the traceback"
        print(
            f"veranda {name}: {kind}: {one_line(str(exc) or type(exc).__name__)}{hint}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT if bad else EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
