"""The ``veranda`` command: a table of subcommands, each in its own module, imported lazily.

A subcommand module exposes ``add_arguments(parser)`` and ``run(args) -> int``. Lazy import keeps
``veranda detect-repo`` from paying for Dagster's import time.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "dev": ("veranda_dagster.cli.dev", "the product in the Dagster UI against a loopback world"),
    "sim": ("veranda_dagster.cli.sim", "file tickets and inject faults into veranda dev"),
    "backends": ("veranda_dagster.cli.backends", "probe every configured backend"),
    "detect-repo": ("veranda_dagster.cli.detect_repo", "infer the repository for a ticket"),
    "pack": ("veranda_dagster.cli.pack", "build the bounded context pack for a ticket"),
    "demo": ("veranda_dagster.cli.demo", "run the whole pipeline against loopback fakes"),
    "report": ("veranda_dagster.cli.report", "cost, tokens and outcomes from the instance"),
    "serve-ops": ("veranda_dagster.cli.serve_ops", "serve /healthz, /readyz and /metrics"),
    "mcp-observability": ("veranda_dagster.cli.mcp_observability", "the agents' MCP server"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="veranda", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    if not argv or argv[0] not in COMMANDS:
        parser.parse_args(argv or ["--help"])
        return 2
    name = argv[0]
    module = importlib.import_module(COMMANDS[name][0])
    cmd_parser = argparse.ArgumentParser(prog=f"veranda {name}", description=COMMANDS[name][1])
    module.add_arguments(cmd_parser)
    args = cmd_parser.parse_args(argv[1:])
    return int(module.run(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
