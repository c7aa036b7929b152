"""``dagster dev`` (webserver, daemon, code server) on a simulation's home, as a child we own.

The product is wired to the fakes only through the environment (``SimWorld.env``) and an
ordinary workspace file naming ``veranda_dagster.definitions``. ``dagster dev`` runs with its
working directory at ``DAGSTER_HOME``, so the instance it uses is that home's ``dagster.yaml``
and it has no stray one in the checkout to warn about. The child gets a session of its own, so
``stop`` reaches the webserver, the daemon, the code server and every run worker they started,
and nothing else.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from veranda_dagster.sim.child_process import ChildProcess

DEV_START_TIMEOUT_S = 180.0
"""Webserver up and the code location loaded; two busy cores take a minute."""
DEV_STOP_TIMEOUT_S = 30.0
"""Graceful shutdown after SIGINT before the process group is killed."""
READY_POLL_S = 0.5
WORKSPACE_YAML = """\
# Written by veranda dev: the product's one code location.
load_from:
  - python_module:
      module_name: veranda_dagster.definitions
      location_name: veranda
"""
LOCATION_QUERY = """
{ workspaceOrError { __typename ... on Workspace { locationEntries {
    name loadStatus locationOrLoadError { __typename ... on PythonError { message } } } } } }
"""


class DagsterDevError(RuntimeError):
    """``dagster dev`` did not come up (its log tail says why)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DagsterDev(ChildProcess):
    """``with DagsterDev(home, env) as dev: dev.url``; ``dev.graphql(query, variables)``."""

    def __init__(self, home: Path, env: dict[str, str], port: int | None = None) -> None:
        self.home = Path(home)
        super().__init__(self.home / "dagster-dev.log", DEV_STOP_TIMEOUT_S)
        self.env = dict(env)
        self.port = port or free_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def workspace_path(self) -> Path:
        """The workspace file ``dagster dev`` loads (written by ``start``)."""
        return self.home / "workspace.yaml"

    def start(self, timeout: float = DEV_START_TIMEOUT_S) -> DagsterDev:
        workspace = self.workspace_path
        workspace.write_text(WORKSPACE_YAML)
        argv = [sys.executable, "-m", "dagster", "dev", "-w", str(workspace)]
        argv += ["-h", "127.0.0.1", "-p", str(self.port)]
        env = {**os.environ, **self.env, "DAGSTER_HOME": str(self.home)}
        self.spawn_until_ready(argv, self.home, env, self._wait_ready, timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            if (code := self.exit_code()) is not None:
                raise DagsterDevError(f"dagster dev exited {code}: {self.log_tail()}")
            try:
                data = self.graphql(LOCATION_QUERY, timeout=10)
                entries = data["workspaceOrError"].get("locationEntries") or []
                loaded = [e for e in entries if e["loadStatus"] == "LOADED"]
                if loaded and all(
                    e["locationOrLoadError"]["__typename"] == "RepositoryLocation" for e in loaded
                ):
                    return
                if any(e["locationOrLoadError"]["__typename"] == "PythonError" for e in loaded):
                    raise DagsterDevError(f"code location failed to load: {entries}")
                last = str(entries)
            except (httpx.HTTPError, KeyError, TypeError) as exc:
                last = f"{type(exc).__name__}: {exc}"
            time.sleep(READY_POLL_S)
        raise DagsterDevError(f"not ready after {timeout:g} s ({last}): {self.log_tail()}")

    def graphql(
        self, query: str, variables: dict[str, Any] | None = None, timeout: float = 30
    ) -> dict[str, Any]:
        """One request to the webserver's GraphQL endpoint (the API the UI itself uses)."""
        response = httpx.post(
            f"{self.url}/graphql",
            json={"query": query, "variables": variables or {}},
            timeout=timeout,
        )
        response.raise_for_status()
        body = response.json()
        if body.get("errors"):
            raise DagsterDevError(f"GraphQL errors: {body['errors']}")
        data: dict[str, Any] = body["data"]
        return data

    def __enter__(self) -> DagsterDev:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
