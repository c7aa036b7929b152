"""Run a test offline for real: in a network namespace whose only interface is loopback.

A real vendor CLI could reach for its vendor (an update check, telemetry, a model call that
escaped the base URL); inside ``unshare -n`` nothing but 127.0.0.1 exists, so a test that
passes there did its whole job against the loopback fakes. ``ran_offline`` re-runs the calling
test in a child pytest inside such a namespace (the fakes, the product and the CLI all live in
it) and reports the child's outcome; where the machine has no ``unshare`` (or may not use it)
the test runs here, in this process, as before. Future sandboxing of the agent CLI must keep
loopback reachable: the CLI talks to the scripted model server on 127.0.0.1.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from veranda_dagster.sim.sim_vendors import REAL_AGENTS, find_binary

NETNS_ENV = "VERANDA_TEST_IN_NETNS"
CHILD_TIMEOUT_S = 900.0
UNROUTABLE = ("192.0.2.1", 9)
"""TEST-NET-1 (RFC 5737): never routed, so reaching it at all means we are online."""


def netns_wrapper() -> list[str] | None:
    """``unshare -n`` with loopback up, when this machine allows it (root, or user namespaces)
    and we are not inside one already."""
    if os.environ.get(NETNS_ENV) == "1":
        return None
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None:
        return None
    try:
        probe = subprocess.run(
            [unshare, "-n", ip, "link", "set", "lo", "up"], capture_output=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if probe.returncode != 0:
        return None
    return [unshare, "-n", "sh", "-c", f'"{ip}" link set lo up && exec "$@"', "netns"]


def ran_offline(request: pytest.FixtureRequest) -> bool:
    """True when the calling test has just run, and passed, in a loopback-only namespace (the
    caller returns); False when its body should run here."""
    wrapper = netns_wrapper()
    if wrapper is None:
        return False
    cmd = [*wrapper, sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"]
    cmd += ["-n", "0", "-m", "", request.node.nodeid]  # one test: no xdist workers
    proc = subprocess.run(
        cmd,
        cwd=str(request.config.rootpath),
        env={**os.environ, NETNS_ENV: "1"},
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
        check=False,
    )
    out = proc.stdout[-8000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, f"failed inside the loopback-only namespace:\n{out}"
    assert "1 passed" in proc.stdout, f"did not run inside the namespace:\n{out}"
    print(proc.stdout[-4000:])
    return True


def in_netns() -> bool:
    return os.environ.get(NETNS_ENV) == "1"


def assert_offline() -> None:
    """Inside the namespace no route leaves the machine: connecting anywhere but loopback
    fails at once (``ENETUNREACH``), not after a timeout."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        try:
            sock.connect(UNROUTABLE)
        except OSError as exc:
            assert exc.errno == errno.ENETUNREACH, exc
        else:
            raise AssertionError("a non-loopback address was reachable")


def require_cli(agent: str) -> Path:
    """The pinned binary; a skip without it, but a failure under ``CI`` (.ci/run installs it)."""
    binary = find_binary(agent)
    if binary is None:
        package = REAL_AGENTS[agent].package
        if os.environ.get("CI"):
            pytest.fail(f"CI: the {agent} CLI ({package}) must be installed by .ci/run")
        pytest.skip(f"{agent} CLI ({package}) not installed here; .ci/run installs it")
    return binary
