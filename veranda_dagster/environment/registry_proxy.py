"""The registry proxy: a setup step's only way out of its sandbox, read-only, to the
registries the deployment allows.

A setup step installs packages, so unlike a repository's tests it needs a network; but it runs
the repository's code (a ``setup.py``, an npm ``postinstall``), so what it gets is narrow. The
worker starts one proxy per setup run, outside the sandbox, on a unix socket bound read-only
into it (the same bridge relays a loopback port to it as for an agent's turn, ``bridge.py``).
Per request it:

* answers only ``GET`` and ``HEAD`` (a package install reads; an upload, a ``CONNECT`` tunnel
  or a WebSocket upgrade is a 405/501: nothing can be published or exfiltrated by method);
* forwards ``/<registry>/<path>`` to ``<path>`` on that registry's origin (an index links its
  files relative to itself, often outside the index's own path), and an absolute target
  (``GET http://host/path``, how tools send through ``http_proxy``) only on a configured
  registry's origin; every other host is a 403 naming the host;
* drops any ``Authorization`` or cookie the client sent and adds the registry's own
  ``Authorization`` (``registries.Registry.auth``), so a private registry's credential never
  enters the sandbox and cannot be redirected to another host;
* rewrites a configured registry's absolute URLs in an index page or JSON answer (PyPI's simple
  pages link to ``files.pythonhosted.org``) and in a redirect's ``Location`` to their loopback
  mount, so the tool's next request comes back here too.

Log lines and the refusal record name the method, the path without its query, and why.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final
from urllib.parse import unquote, urlsplit

import httpx

from veranda_dagster.environment.registries import Registry
from veranda_dagster.sandbox.http_request import Refused, Request, read_request
from veranda_dagster.sandbox.unix_server import UnixSocketServer

log = logging.getLogger("veranda.registry_proxy")

READ_METHODS: Final = frozenset({"GET", "HEAD"})
MAX_PACKAGE_BYTES: Final = 1024 * 1024 * 1024
"""One answer (a large wheel or tarball); past it the stream is cut. The environment's own
size bound (``setup.MAX_ENV_BYTES``) holds the total."""
MAX_REWRITE_BYTES: Final = 16 * 1024 * 1024
"""An index page or metadata JSON read whole to rewrite registry URLs (PyPI's largest simple
pages are a few MB); a larger one streams through unchanged."""
CLIENT_READ_TIMEOUT_S: Final = 60.0
"""Silence from pip or npm while it sends its request (a few hundred bytes): a client that
says nothing for a minute holds a slot for nothing."""
UPSTREAM_CONNECT_TIMEOUT_S: Final = 20.0
"""Reaching a package registry: a reachable one connects in well under a second."""
UPSTREAM_READ_TIMEOUT_S: Final = 120.0
"""Silence between two chunks of a download; a registry that stalls this long is down."""
MAX_REFUSALS_KEPT: Final = 50
"""Refusals one setup run keeps for its outcome (the error shows five; each is also logged);
the rest are only counted (``refusals``). The repository's script decides how many requests
it makes, and the kept ones are stored with the outcome and its ready record."""
MAX_CONCURRENT_REQUESTS: Final = 32
"""pip and npm fetch a handful of files at once."""
SOCKET_NAME: Final = "proxy.sock"
_DROPPED: Final = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host",
        "content-length", "authorization", "cookie",
    }
)  # fmt: skip
_REWRITTEN_TYPES: Final = ("text/html", "application/vnd.pypi.simple", "json")


class RegistryProxy:
    """One setup run's proxy; a context manager serving on a thread until closed.
    ``local_origin`` is where the bridge listens inside (``http://127.0.0.1:<port>``)."""

    def __init__(
        self,
        registries: Sequence[Registry],
        local_origin: str,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.registries = {r.name: r for r in registries}
        self.local_origin = local_origin.rstrip("/")
        self.refused: list[str] = []
        self.refusals = 0
        self._refusals_lock = threading.Lock()
        self.forwarded = 0
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT_REQUESTS)
        self._client = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(UPSTREAM_READ_TIMEOUT_S, connect=UPSTREAM_CONNECT_TIMEOUT_S),
            follow_redirects=False,
            trust_env=False,
        )
        self.folder = Path(tempfile.mkdtemp(prefix="veranda-registry-proxy-"))
        self.folder.chmod(0o700)
        self.socket_path = self.folder / SOCKET_NAME
        self._server: UnixSocketServer | None = None

    def mount(self, registry: Registry) -> str:
        """Where ``registry``'s URL is reached from inside the sandbox."""
        return self._origin_mount(registry) + urlsplit(registry.url).path

    def _origin_mount(self, registry: Registry) -> str:
        return f"{self.local_origin}/{registry.name}"

    def __enter__(self) -> RegistryProxy:
        self._server = UnixSocketServer(self.socket_path, self, "veranda-registry-proxy")
        self._server.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._client.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # --- one connection -------------------------------------------------------------------

    def serve(self, conn: socket.socket) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(conn, None, Refused(503, "too many requests in flight"))
            return
        try:
            conn.settimeout(CLIENT_READ_TIMEOUT_S)
            request: Request | None = None
            try:
                request = read_request(conn)
                registry, url = self.route(request)
            except Refused as refusal:
                self._refuse(conn, request, refusal)
                return
            except (TimeoutError, OSError):
                self._refuse(conn, request, Refused(408, "request not read in time"))
                return
            self._forward(conn, request, registry, url)
        finally:
            self._slots.release()

    def route(self, request: Request) -> tuple[Registry, str]:
        """The registry and upstream URL for ``request``, or ``Refused``."""
        if request.method not in READ_METHODS:
            raise Refused(405, f"{request.method} is refused: package registries are read-only")
        if any(name.lower() == "upgrade" for name, _ in request.headers):
            raise Refused(501, "protocol upgrades are refused")
        target = request.path
        if unquote(target).find("\\") >= 0 or any(
            seg in (".", "..") for seg in unquote(target.split("?", 1)[0]).split("/")
        ):
            raise Refused(400, "dot segments are refused")
        if target.startswith(("http://", "https://")):
            origin = urlsplit(target)
            for registry in self.registries.values():
                if f"{origin.scheme}://{origin.netloc}".lower() == registry.origin:
                    return registry, target
            host = urlsplit(target).hostname or "?"
            raise Refused(403, f"{host} is not a configured package registry")
        if not target.startswith("/"):
            raise Refused(400, "request target is not a path")
        name, _, rest = target[1:].partition("/")
        mounted = self.registries.get(name)
        if mounted is None:
            raise Refused(403, f"/{name[:40]} is not a configured package registry")
        return mounted, f"{mounted.origin}/{rest}"

    def _headers(self, request: Request, registry: Registry) -> list[tuple[str, str]]:
        out = [(n, v) for n, v in request.headers if n.lower() not in _DROPPED]
        if registry.auth:
            out.append(("authorization", registry.auth))
        return out

    def _rewrite(self, text: str) -> str:
        for registry in self.registries.values():
            text = text.replace(registry.origin, self._origin_mount(registry))
        return text

    def _forward(self, conn: socket.socket, request: Request, registry: Registry, url: str) -> None:
        headers = self._headers(request, registry)
        try:
            with self._client.stream(request.method, url, headers=headers) as resp:
                self.forwarded += 1
                kind = resp.headers.get("content-type", "")
                size = int(resp.headers.get("content-length") or 0)
                whole = any(t in kind for t in _REWRITTEN_TYPES) and size <= MAX_REWRITE_BYTES
                if whole and request.method == "GET":
                    decoded = resp.iter_bytes()
                    body, complete = _read_bounded(decoded)
                    if complete:
                        data = self._rewrite(body.decode(resp.encoding or "utf-8", "replace"))
                        payload = data.encode(resp.encoding or "utf-8")
                        _send_head(conn, resp, self._rewrite, length=len(payload))
                        conn.sendall(payload)
                        return
                    # past the rewrite bound: through unchanged, what was read then the rest
                    _send_head(conn, resp, self._rewrite, length=None, decoded=True)
                    self._stream(conn, request, itertools.chain([body], decoded))
                    return
                _send_head(conn, resp, self._rewrite, length=None)
                if request.method == "HEAD" or resp.status_code in (204, 304):
                    return
                # a response the transport already read (a test's mock) has no stream left
                self._stream(
                    conn, request, [resp.content] if resp.is_stream_consumed else resp.iter_raw()
                )
        except httpx.TimeoutException:
            self._refuse(conn, request, Refused(504, "registry did not answer in time"))
        except (httpx.HTTPError, httpx.StreamError) as exc:
            self._refuse(conn, request, Refused(502, f"registry failed: {type(exc).__name__}"))
        except OSError:
            log.info("registry proxy: client went away during %s", request.shown)

    @staticmethod
    def _stream(conn: socket.socket, request: Request, chunks: Iterable[bytes]) -> None:
        """``chunks`` sent chunked, cut past ``MAX_PACKAGE_BYTES`` (no last chunk: the client
        sees a truncated answer, never a complete-looking one)."""
        sent = 0
        for chunk in chunks:
            sent += len(chunk)
            if sent > MAX_PACKAGE_BYTES:
                log.warning("registry proxy cut %s past %d bytes", request.shown, sent)
                return
            if chunk:
                conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        conn.sendall(b"0\r\n\r\n")

    def _refuse(self, conn: socket.socket, request: Request | None, refusal: Refused) -> None:
        shown = request.shown if request is not None else "(unread request)"
        line = f"registry proxy refused {shown}: {refusal.reason} ({refusal.status})"
        log.warning(line)
        with self._refusals_lock:  # requests are served on threads of their own
            self.refusals += 1
            if len(self.refused) < MAX_REFUSALS_KEPT:
                self.refused.append(line)
        body = f"veranda registry proxy: {refusal.reason}\n"
        head = (
            f"HTTP/1.1 {refusal.status} Refused by veranda registry proxy\r\n"
            "content-type: text/plain\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            conn.sendall(head.encode() + body.encode())
            conn.shutdown(socket.SHUT_WR)


def _read_bounded(chunks: Iterator[bytes]) -> tuple[bytes, bool]:
    """What ``chunks`` hold up to past ``MAX_REWRITE_BYTES``, and whether that was all of it
    (the rest, if not, is still in ``chunks``)."""
    data = bytearray()
    for chunk in chunks:
        data += chunk
        if len(data) > MAX_REWRITE_BYTES:
            return bytes(data), False
    return bytes(data), True


def _send_head(
    conn: socket.socket,
    resp: httpx.Response,
    rewrite: Callable[[str], str],
    length: int | None,
    *,
    decoded: bool = False,
) -> None:
    """The answer's head; ``decoded``: the body sent is the decoded one (no content-encoding),
    as it is whenever it was read to be rewritten."""
    lines = [f"HTTP/1.1 {resp.status_code} {resp.reason_phrase or 'OK'}"]
    for name, value in resp.headers.multi_items():
        low = name.lower()
        if low in _DROPPED or (low == "content-encoding" and (length is not None or decoded)):
            continue
        lines.append(f"{name}: {rewrite(value) if low == 'location' else value}")
    if length is not None:
        lines.append(f"content-length: {length}")
    elif resp.request.method != "HEAD" and resp.status_code not in (204, 304):
        lines.append("transfer-encoding: chunked")
    lines.append("connection: close")
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
