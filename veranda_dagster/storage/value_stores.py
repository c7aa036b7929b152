"""Where asset values live: one JSON document per (asset, partition).

Two vendors with one contract. ``read`` raises ``StoredValueError`` naming the asset and the
partition when there is nothing stored; ``write`` replaces the value atomically, so a reader
(another step process, another pod) sees either the old document or the new one, never half.
The filesystem store is the default for a single machine; PostgreSQL is for a deployment where
steps run in pods that share nothing but the database.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

from veranda_dagster.domain.core.bounds import POSTGRES_POOL_MAX, STALE_TEMP_VALUE_AGE_S
from veranda_dagster.domain.core.errors import ConfigError, StoredValueError, TransientError
from veranda_dagster.domain.core.redaction import mask_url_passwords, scrub, url_password
from veranda_dagster.storage.faults import StorageFaultError


def write_atomically(target: Path, text: str) -> None:
    """Replace ``target`` whole: written to a hidden ``.tmp`` sibling, synced, then renamed
    over it, so a reader sees the old text or the new, never half (a failed write leaves no
    temp file behind)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


TABLE = "veranda_asset_values"

_DDL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    asset text NOT NULL,
    partition text NOT NULL,
    value jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (asset, partition)
)
"""

_UPSERT = f"""
INSERT INTO {TABLE} (asset, partition, value, updated_at) VALUES (%s, %s, %s::jsonb, now())
ON CONFLICT (asset, partition) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
"""

LEDGER_TABLE = "veranda_ledgers"

_LEDGER_DDL = f"""
CREATE TABLE IF NOT EXISTS {LEDGER_TABLE} (
    seq bigserial PRIMARY KEY,
    log text NOT NULL,
    partition text NOT NULL,
    entry jsonb NOT NULL,
    at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS {LEDGER_TABLE}_by_partition ON {LEDGER_TABLE} (log, partition)
"""

_SAFE = re.compile(r"[^A-Za-z0-9._-]")

_SWEPT: set[str] = set()
"""Filesystem stores already swept for stale temp files in this process (the sweep on start)."""


class Values(Protocol):
    """The storage contract: JSON text in, JSON text out, keyed by (asset, partition)."""

    def write(self, asset: str, partition: str, text: str) -> str:
        """Store ``text``; returns where it went (a path or ``table/asset/partition``)."""
        ...

    def read(self, asset: str, partition: str) -> str: ...

    def exists(self, asset: str, partition: str) -> bool: ...

    def append(self, log: str, partition: str, line: str) -> None:
        """Add one JSON line to an append-only log (the spend ledger); durable on return."""
        ...

    def lines(self, log: str, partition: str) -> list[str]:
        """Every line appended to ``log`` for ``partition``, oldest first."""
        ...


def _segment(name: str) -> str:
    """A file-name-safe segment that cannot climb out of the store (``..`` or ``/``)."""
    safe = _SAFE.sub("_", name)
    return safe if safe not in {"", ".", ".."} else f"_{safe}"


class FilesystemValues:
    """``<root>/<asset>/<partition>.json``, written to a temp file in the same folder, fsynced
    and renamed over the old one (``os.replace`` is atomic on POSIX).

    A writer killed between creating its temp file and the rename leaves ``.<name>.<rand>.tmp``
    behind. Those are removed once they are older than ``STALE_TEMP_VALUE_AGE_S`` (so never a
    live writer's): the whole store on first use in a process, a folder on each write to it.
    """

    def __init__(self, root: str | Path, *, clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self._clock = clock
        if str(self.root) not in _SWEPT:
            _SWEPT.add(str(self.root))
            self.sweep()

    def sweep(self, folder: Path | None = None) -> list[Path]:
        """Remove stale temp files in ``folder`` (default: every asset folder); returns them."""
        folders = [folder] if folder else _dirs(self.root)
        cutoff = self._clock() - STALE_TEMP_VALUE_AGE_S
        removed: list[Path] = []
        for where in folders:
            for entry in _entries(where):
                if not (entry.name.startswith(".") and entry.name.endswith(".tmp")):
                    continue
                try:
                    if (
                        entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_mtime < cutoff
                    ):
                        Path(entry.path).unlink(missing_ok=True)
                        removed.append(Path(entry.path))
                except OSError:
                    continue  # another sweeper got there first, or it vanished
        return removed

    def path(self, asset: str, partition: str) -> Path:
        return self.root / _segment(asset) / f"{_segment(partition)}.json"

    def write(self, asset: str, partition: str, text: str) -> str:
        target = self.path(asset, partition)
        try:
            return self._write(target, text)
        except OSError as exc:
            raise StorageFaultError("store", asset, partition, target, exc) from exc

    def _write(self, target: Path, text: str) -> str:
        target.parent.mkdir(parents=True, exist_ok=True)
        self.sweep(target.parent)
        write_atomically(target, text)
        return str(target)

    def read(self, asset: str, partition: str) -> str:
        target = self.path(asset, partition)
        try:
            return target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StoredValueError(
                f"no stored value for asset {asset!r} partition {partition!r} (looked in {target})"
            ) from None
        except OSError as exc:
            raise StorageFaultError("read", asset, partition, target, exc) from None
        except UnicodeDecodeError as exc:
            raise StoredValueError(
                f"stored value for asset {asset!r} partition {partition!r} is unreadable: {exc}"
            ) from None

    def exists(self, asset: str, partition: str) -> bool:
        return self.path(asset, partition).is_file()

    def log_path(self, log: str, partition: str) -> Path:
        return self.root / f"_{_segment(log)}" / f"{_segment(partition)}.jsonl"

    def append(self, log: str, partition: str, line: str) -> None:
        """One ``O_APPEND`` write of the whole line, then fsync: concurrent appenders never
        interleave inside a line, and a kill leaves at most a torn last line, which ``lines``
        skips and the next append starts after."""
        target = self.log_path(log, partition)
        try:
            self._append(target, line)
        except OSError as exc:
            raise StorageFaultError("append to", f"_{log}", partition, target, exc) from exc

    def _append(self, target: Path, line: str) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"  # a killed append's tail
            data = ("\n" if torn else "") + line.replace("\n", " ") + "\n"
            os.write(fd, data.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def lines(self, log: str, partition: str) -> list[str]:
        try:
            text = self.log_path(log, partition).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        complete = text if text.endswith("\n") else text.rpartition("\n")[0]
        return [line for line in complete.splitlines() if line.strip()]


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def _dirs(root: Path) -> list[Path]:
    return [Path(e.path) for e in _entries(root) if e.is_dir(follow_symlinks=False)]


def redact_url(url: str) -> str:
    """A connection URL without its password, for messages (parsed: any character in it)."""
    return mask_url_passwords(url)


def connect_kwargs(url: str) -> dict[str, Any]:
    """libpq keyword arguments for ``postgresql[+driver]://user:password@host:port/db?k=v``.

    The URL is taken apart here, not by libpq: libpq's own parser rejects a raw ``%``, ``@`` or
    ``/`` in the password and quotes the offending fragment in its error, which then travelled
    through retries into the event log. The password runs to the URL's last ``@`` and reaches
    libpq only as a keyword argument; the user, password and database are percent-decoded
    where they are percent-encoded (``unquote`` leaves a raw ``%`` as it is)."""
    scheme, sep, rest = libpq_url(url).partition("://")
    if not sep or scheme not in ("postgres", "postgresql"):
        raise ConfigError(
            "VERANDA_POSTGRES_URL must look like postgresql+psycopg2://user:password@host:5432/db"
        )
    userinfo, _, location = rest.rpartition("@")
    parts = urlsplit("//" + location)
    try:
        port = parts.port
    except ValueError:
        raise ConfigError("VERANDA_POSTGRES_URL has a port that is not a number") from None
    kwargs: dict[str, Any] = dict(parse_qsl(parts.query))
    named = {
        "host": parts.hostname,
        "port": port,
        "user": unquote(userinfo.partition(":")[0]),
        "password": unquote(url_password(url) or ""),
        "dbname": unquote(parts.path.lstrip("/")),
    }
    kwargs.update({k: v for k, v in named.items() if v})
    return kwargs


def libpq_url(url: str) -> str:
    """``postgresql+psycopg2://`` (the SQLAlchemy form dagster-postgres needs) as libpq takes it."""
    return re.sub(r"^(postgres(?:ql)?)\+\w+://", r"\1://", url)


_POOLS: dict[tuple[int, str], Any] = {}
"""One connection pool per (process, database URL): a forked step process never reuses its
parent's sockets, and every store, ledger and budget on the same database shares one pool."""

_POOLS_LOCK = threading.Lock()


def _pool(url: str) -> Any:
    """psycopg2's own ``ThreadedConnectionPool`` (installed with dagster-postgres), created on
    first use; the first connection also creates the tables."""
    import psycopg2
    import psycopg2.pool

    key = (os.getpid(), url)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is not None:
            return pool
        kwargs = connect_kwargs(url)
        try:
            # one connection is kept open between operations (psycopg2 closes returned ones
            # past ``minconn``); concurrent threads may open up to the max for a moment
            pool = psycopg2.pool.ThreadedConnectionPool(
                1, POSTGRES_POOL_MAX, **kwargs, connect_timeout=10
            )
            conn = pool.getconn()
        except psycopg2.OperationalError as exc:
            detail = scrub(str(exc), [url, kwargs.get("password", "")]).strip()
            raise TransientError(
                f"value store: cannot connect to {redact_url(url)}: {detail}"
            ) from None
        try:
            with conn, conn.cursor() as cur:
                cur.execute(_DDL)
                cur.execute(_LEDGER_DDL)
        finally:
            pool.putconn(conn)
        _POOLS[key] = pool
        return pool


@contextlib.contextmanager
def pooled_connection(url: str) -> Iterator[Any]:
    """A connection from the URL's pool, returned on exit; one that broke mid-use (a restarted
    server) is closed rather than handed to the next caller."""
    import psycopg2
    import psycopg2.pool

    pool = _pool(url)
    try:
        conn = pool.getconn()
    except psycopg2.OperationalError as exc:
        detail = scrub(str(exc), [url, connect_kwargs(url).get("password", "")]).strip()
        raise TransientError(
            f"value store: cannot connect to {redact_url(url)}: {detail}"
        ) from None
    except psycopg2.pool.PoolError:  # every one of the pool's connections is in use
        raise TransientError(
            f"value store: all {POSTGRES_POOL_MAX} connections to {redact_url(url)} are in "
            "use in this process; try again when one is returned"
        ) from None
    broken = False
    try:
        yield conn
    except (psycopg2.OperationalError, psycopg2.InterfaceError):
        broken = True
        raise
    finally:
        pool.putconn(conn, close=broken or bool(conn.closed))


class PostgresValues:
    """The ``veranda_asset_values`` table; one upsert per write, one transaction each, on a
    connection from the process's pool (``POSTGRES_POOL_MAX``), so a phase's reads, writes
    and ledger appends pay the connection set-up once per process, not once per operation."""

    def __init__(self, url: str) -> None:
        if not url:
            raise ConfigError("value store kind 'postgres' needs a URL: set VERANDA_POSTGRES_URL")
        self.url = url

    def _run(self, sql: str, args: tuple[Any, ...], fetch: str = "") -> Any:
        with pooled_connection(self.url) as conn, conn, conn.cursor() as cur:
            cur.execute(sql, args)
            if fetch == "one":
                return cur.fetchone()
            if fetch == "all":
                return cur.fetchall()
            return None

    def write(self, asset: str, partition: str, text: str) -> str:
        self._run(_UPSERT, (asset, partition, text))
        return f"{TABLE}/{asset}/{partition}"

    def _fetch(self, asset: str, partition: str) -> Any:
        return self._run(
            f"SELECT value::text FROM {TABLE} WHERE asset = %s AND partition = %s",
            (asset, partition),
            "one",
        )

    def read(self, asset: str, partition: str) -> str:
        row = self._fetch(asset, partition)
        if row is None:
            raise StoredValueError(
                f"no stored value for asset {asset!r} partition {partition!r} (table {TABLE})"
            )
        return str(row[0])

    def exists(self, asset: str, partition: str) -> bool:
        return self._fetch(asset, partition) is not None

    def append(self, log: str, partition: str, line: str) -> None:
        self._run(
            f"INSERT INTO {LEDGER_TABLE} (log, partition, entry) VALUES (%s, %s, %s::jsonb)",
            (log, partition, line),
        )

    def lines(self, log: str, partition: str) -> list[str]:
        rows = self._run(
            f"SELECT entry::text FROM {LEDGER_TABLE} WHERE log = %s AND partition = %s "
            "ORDER BY seq",
            (log, partition),
            "all",
        )
        return [row[0] for row in rows]


def parse_json(text: str, asset: str, partition: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StoredValueError(
            f"stored value for asset {asset!r} partition {partition!r} is not valid JSON "
            f"(line {exc.lineno} col {exc.colno}: {exc.msg})"
        ) from None


def default_values_dir() -> str:
    """Where filesystem values live by default: ``$DAGSTER_HOME/veranda_values``, or
    ``.veranda/values`` when DAGSTER_HOME is unset."""
    home = os.environ.get("DAGSTER_HOME")
    return str(Path(home) / "veranda_values") if home else str(Path(".veranda") / "values")
