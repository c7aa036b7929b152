"""Shared fixtures, and the order the suite runs in.

Under xdist (``addopts``' ``-n 2 --maxschedchunk 1``) the whole-ticket tests run first,
longest kind first (``slow`` and ``real_cli``, then ``slow``), and the quick ones after: the
scheduler hands each free worker the next test in collection order, so the long runs are
shared by both workers and the last minute is short tests on both, not one long run on one
worker while the other idles.

``postgres_url``: a throwaway PostgreSQL 15 cluster for the whole session.

The cluster lives in a temp dir, listens on a free 127.0.0.1 port only (its unix socket in the
same temp dir), trusts local connections, and is stopped with ``pg_ctl stop -m fast``.
``initdb`` refuses to run as root, so under root (CI) the cluster runs as an unprivileged user
(``postgres`` if present, else ``nobody``). Missing binaries fail the test loudly: ``.ci/run``
installs them, and a skipped storage test would hide exactly what it exists to show.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from veranda_dagster.plugins import load_plugins

PG_START_TIMEOUT_S = 60


def pytest_configure(config: pytest.Config) -> None:
    """Every test process (each xdist worker too) knows the plugins, as ``definitions.py`` and
    the CLI make every product process know them (the scrubber's token shapes included)."""
    load_plugins()


def _run_order(item: pytest.Item) -> int:
    if item.get_closest_marker("slow") is None:
        return 2
    return 0 if item.get_closest_marker("real_cli") is not None else 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker; a plain run keeps the file order
        items.sort(key=_run_order)  # stable: within each kind, the file order


def _pg_bin(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if not found:
        pytest.fail(
            f"PostgreSQL server binary {name!r} not found on PATH or under "
            "/usr/lib/postgresql/*/bin: install postgresql-15 (.ci/run does)"
        )
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_as() -> str | None:
    """The unprivileged user to run the server as when we are root; None when we are not."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    pytest.fail("running as root and neither a 'postgres' nor a 'nobody' user exists")


def _cmd(user: str | None, *args: str) -> list[str]:
    return ["runuser", "-u", user, "--", *args] if user else list(args)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    user = _run_as()
    root = Path(tempfile.mkdtemp(prefix="veranda-pg-"))
    data, sock, log = root / "data", root / "sock", root / "server.log"
    sock.mkdir()
    if user:
        info = pwd.getpwnam(user)
        for path in (root, sock):
            os.chown(path, info.pw_uid, info.pw_gid)
    port = _free_port()
    subprocess.run(
        _cmd(
            user,
            initdb,
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-locale",
        ),
        check=True,
        capture_output=True,
        timeout=PG_START_TIMEOUT_S,
    )
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {sock} -c fsync=off"
    start = subprocess.run(
        _cmd(user, pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start"),
        capture_output=True,
        text=True,
        timeout=PG_START_TIMEOUT_S,
    )
    if start.returncode != 0:
        tail = log.read_text()[-2000:] if log.exists() else start.stderr
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"pg_ctl start failed on 127.0.0.1:{port}: {tail}")
    try:
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE veranda_test")
        conn.close()
        # The driver is named: SQLAlchemy 2.1 (used by dagster-postgres) defaults to psycopg 3,
        # and dagster-postgres ships psycopg2.
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/veranda_test?sslmode=disable"
    finally:
        subprocess.run(
            _cmd(user, pg_ctl, "-D", str(data), "stop", "-m", "fast"),
            capture_output=True,
            timeout=PG_START_TIMEOUT_S,
        )
        shutil.rmtree(root, ignore_errors=True)
