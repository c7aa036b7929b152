"""A running push receiver on loopback over a real SQLite instance and the product's own code
location (``veranda_dagster.definitions``, loaded in process): what ``veranda intake serve``
runs, minus the workspace file."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

import dagster as dg
import pytest
from dagster._core.workspace.context import WorkspaceProcessContext

from veranda_dagster.sources.push_launch import PushLauncher
from veranda_dagster.sources.webhook_events import Scope
from veranda_dagster.sources.webhook_server import WebhookReceiver, make_server

SECRETS = {"linear": "lin-wh-secret", "slack": "slack-signing-secret", "jira": "jira-wh-secret"}
SCOPE = Scope(linear_bot_user_id="bot-1", linear_label="veranda", jira_label="veranda")


@dataclass
class Receiver:
    url: str
    instance: dg.DagsterInstance
    receiver: WebhookReceiver


@pytest.fixture
def push(
    workspace_instance: tuple[dg.DagsterInstance, WorkspaceProcessContext],
) -> Iterator[Receiver]:
    instance, workspace = workspace_instance
    instance.wipe()
    receiver = WebhookReceiver(dict(SECRETS), PushLauncher(instance, workspace).launch, SCOPE)
    server = make_server(receiver, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield Receiver(f"http://{host!s}:{port}", instance, receiver)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
