"""``veranda intake serve [--host H] [--port P] [-w workspace.yaml]``: the push intake.

Runs the webhook receiver (``sources/webhook_server.py``) beside the daemon, on the same
``DAGSTER_HOME`` and the same workspace file, so a verified Linear, Slack or Jira webhook starts
its ticket's run within a second or two instead of at the next poll (the poll keeps running as
the backstop). Loopback by default; each source is on only when its webhook secret is set
(``LINEAR_WEBHOOK_SECRET``, ``SLACK_SIGNING_SECRET``, ``JIRA_WEBHOOK_SECRET``).
"""

from __future__ import annotations

import argparse
import logging
import os

from veranda_dagster.settings import env_number
from veranda_dagster.sources.webhook_server import DEFAULT_WEBHOOK_HOST, DEFAULT_WEBHOOK_PORT


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    serve = actions.add_parser("serve", help="receive signed webhooks and start ticket runs")
    serve.add_argument(
        "--host",
        default=os.environ.get("VERANDA_WEBHOOK_HOST", DEFAULT_WEBHOOK_HOST),
        help=f"address to listen on (default: $VERANDA_WEBHOOK_HOST, else {DEFAULT_WEBHOOK_HOST})",
    )
    serve.add_argument(
        "--port",
        type=int,
        default=env_number("VERANDA_WEBHOOK_PORT", DEFAULT_WEBHOOK_PORT, int),
        help=f"port (default: $VERANDA_WEBHOOK_PORT, else {DEFAULT_WEBHOOK_PORT})",
    )
    serve.add_argument(
        "-w", "--workspace", default="workspace.yaml", help="the daemon's workspace file"
    )


def run(args: argparse.Namespace) -> int:
    import dagster as dg
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import WorkspaceFileTarget

    from veranda_dagster.cli.instance_home import check_dagster_home
    from veranda_dagster.sources.push_launch import PushLauncher
    from veranda_dagster.sources.webhook_server import (
        WebhookReceiver,
        make_server,
        scope_from_env,
        secrets_from_env,
    )

    check_dagster_home()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    secrets = secrets_from_env(os.environ)
    target = WorkspaceFileTarget(paths=[args.workspace])
    with (
        dg.DagsterInstance.get() as instance,
        WorkspaceProcessContext(instance, target) as workspace,
    ):
        launcher = PushLauncher(instance, workspace)
        receiver = WebhookReceiver(secrets, launcher.launch, scope_from_env(os.environ))
        server = make_server(receiver, args.host, args.port)
        host, port = server.server_address[:2]
        on = ", ".join(sorted(secrets)) or "none (set a webhook secret)"
        print(f"veranda intake on http://{host!s}:{port}/webhooks/<source>; on: {on}", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0
