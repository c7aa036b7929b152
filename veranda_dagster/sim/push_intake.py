"""The push intake in the simulated world: ``veranda intake serve`` as a child process on the
world's instance, and signed Linear ``Issue`` webhooks as Linear posts them.

``veranda dev`` runs the receiver beside ``dagster dev`` and has the fake Linear deliver each
ticket filed to it, so a ticket filed with ``veranda sim ticket`` starts its run within a
second or two, the way a real workspace webhook does, instead of at the next poll (which stays
the backstop). The orchestration benchmark posts the same bodies.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Final

from veranda_dagster.sim.child_process import ChildProcess
from veranda_dagster.sim.dagster_dev import free_port
from veranda_dagster.sources.webhook_auth import SECRET_ENV, sign_linear

INTAKE_START_TIMEOUT_S: Final = 120.0
"""The receiver binds its port only after it has loaded the code location (a code server of
its own): on a loaded 2-core machine that takes tens of seconds, never minutes."""
INTAKE_STOP_TIMEOUT_S: Final = 10.0
"""SIGINT's grace before SIGKILL: the receiver has nothing to flush."""
READY_POLL_S: Final = 0.25
WEBHOOK_POST_TIMEOUT_S: Final = 10.0
"""One delivery's whole wait for the receiver's answer: a delivery is one verified insert and
a run submission, well under a second; a dead receiver must not hold whoever posted."""
CLI = "import sys; from veranda_dagster.cli import main; sys.exit(main(sys.argv[1:]))"
"""The product's CLI from this interpreter (the console script may not be on PATH)."""
_WEBHOOK_SECRETS: Final = frozenset(SECRET_ENV.values())
"""Whatever webhook secrets the caller's environment holds stay out: the receiver verifies with
the secret this process gave it, and the sources without one stay off."""


class IntakeStartError(RuntimeError):
    """The receiver did not come up (its log tail says why)."""


def linear_issue_body(
    key: str,
    *,
    assignee_id: str | None,
    labels: list[str] | tuple[str, ...] = (),
    state_type: str = "unstarted",
    delivery_id: str,
    action: str = "create",
) -> bytes:
    """A Linear entity webhook for one issue, in the fields the receiver reads (the shape is
    Linear's: ``action``, ``type``, ``data``, ``webhookId``, ``webhookTimestamp`` in epoch ms)."""
    return json.dumps(
        {
            "action": action,
            "type": "Issue",
            "data": {
                "identifier": key,
                "assigneeId": assignee_id,
                "labels": [{"id": f"label-{i}", "name": n} for i, n in enumerate(labels)],
                "state": {"type": state_type},
            },
            "webhookId": delivery_id,
            "webhookTimestamp": int(time.time() * 1000),
        }
    ).encode()


def post_signed_linear(
    url: str, secret: str, body: bytes, timeout_s: float = WEBHOOK_POST_TIMEOUT_S
) -> int:
    """POST ``body`` signed with ``secret`` as Linear does; the receiver's status code."""
    headers = {**sign_linear(secret, body), "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


class IntakeProcess(ChildProcess):
    """``veranda intake serve`` on a free loopback port, on ``home``'s instance and the
    workspace file ``dagster dev`` reads. It alone gets the Linear webhook secret (a fresh one
    each start): the daemon and the runs never hold it, as in a deployment."""

    def __init__(self, home: Path, workspace: Path, env: dict[str, str]) -> None:
        self.home = Path(home)
        super().__init__(self.home / "intake.log", INTAKE_STOP_TIMEOUT_S)
        self.workspace = Path(workspace)
        self.env = dict(env)
        self.secret = secrets.token_hex(16)
        self.port = free_port()

    @property
    def linear_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/webhooks/linear"

    def start(self, timeout: float = INTAKE_START_TIMEOUT_S) -> IntakeProcess:
        argv = [sys.executable, "-c", CLI, "intake", "serve", "--host", "127.0.0.1"]
        argv += ["--port", str(self.port), "--workspace", str(self.workspace)]
        env = {k: v for k, v in {**os.environ, **self.env}.items() if k not in _WEBHOOK_SECRETS}
        env |= {"DAGSTER_HOME": str(self.home), SECRET_ENV["linear"]: self.secret}
        self.spawn_until_ready(argv, self.home, env, self._wait_ready, timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (code := self.exit_code()) is not None:
                raise IntakeStartError(f"veranda intake serve exited {code}: {self.log_tail()}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            time.sleep(READY_POLL_S)
        raise IntakeStartError(f"not listening after {timeout:g} s: {self.log_tail()}")

    def __enter__(self) -> IntakeProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
