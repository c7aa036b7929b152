"""``veranda mcp-observability``: the read-only observability MCP server on stdio.

The vendor CLIs start it from their MCP config (see ``OBSERVABILITY_MCP``); it reads
``DAGSTER_HOME``, ``PROMETHEUS_URL`` (and optional ``PROMETHEUS_TOKEN``) and
``VERANDA_K8S_NAMESPACE`` from the environment.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    return None


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.observability.mcp_server import serve_stdio

    serve_stdio()
    return 0
