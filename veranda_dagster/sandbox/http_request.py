"""Reading one HTTP/1.x request from a socket, every part bounded: the credential proxy's input.

The bytes come from inside a sandbox (the agent's CLI, or anything the agent runs), so the head,
the header count, the body (with or without chunked framing) and each chunk's size line have a
named bound, and anything malformed is a ``Refused`` with the status to answer.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Final

MAX_HEAD_BYTES: Final = 64 * 1024
"""Request line plus headers; a CLI sends a few KiB (Claude Code's beta list is the longest)."""
MAX_HEADER_COUNT: Final = 100
"""Headers in one request; the CLIs send about 20."""
MAX_REQUEST_BODY_BYTES: Final = 32 * 1024 * 1024
"""A model request: a long conversation with inline images stays well under this."""
MAX_CHUNK_LINE_BYTES: Final = 1024
"""A chunked request's size line (hex size plus extensions)."""
CHUNK_BYTES: Final = 64 * 1024
"""One read from a socket."""


class Refused(Exception):
    """A request the proxy will not forward: the status to answer and why (no secret)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    """Path with its query, origin-form."""
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def shown(self) -> str:
        """Method and path without the query, clipped: safe to log."""
        return f"{self.method} {self.path.split('?', 1)[0][:200]}"


def read_request(conn: socket.socket) -> Request:
    """One HTTP/1.x request, every part bounded (``MAX_HEAD_BYTES``, ``MAX_HEADER_COUNT``,
    ``MAX_REQUEST_BODY_BYTES``); a chunked body is de-chunked."""
    reader = _Reader(conn)
    head = reader.until(b"\r\n\r\n", MAX_HEAD_BYTES, Refused(431, "request head too large"))
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ")
    except ValueError:
        raise Refused(400, "malformed request line") from None
    if not version.startswith("HTTP/1."):
        raise Refused(505, "only HTTP/1.x is spoken here")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise Refused(400, "malformed header line")
        headers.append((name, value.strip()))
    if len(headers) > MAX_HEADER_COUNT:
        raise Refused(431, "too many headers")
    method = method.upper()
    values = {n.lower(): v for n, v in headers}
    if "chunked" in values.get("transfer-encoding", "").lower():
        body = _read_chunked(reader)
    else:
        try:
            length = int(values.get("content-length", "0") or 0)
        except ValueError:
            raise Refused(400, "bad content-length") from None
        if length < 0:
            raise Refused(400, "bad content-length")
        if length > MAX_REQUEST_BODY_BYTES:
            raise Refused(413, "request body too large")
        body = reader.exactly(length)
    return Request(method, target, headers, body)


def _read_chunked(reader: _Reader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = reader.until(b"\r\n", MAX_CHUNK_LINE_BYTES, Refused(400, "bad chunk size line"))
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise Refused(400, "bad chunk size") from None
        if size == 0:
            reader.until(b"\r\n\r\n", MAX_HEAD_BYTES, Refused(431, "trailers too large"), b"\r\n")
            return b"".join(parts)
        total += size
        if total > MAX_REQUEST_BODY_BYTES:
            raise Refused(413, "request body too large")
        parts.append(reader.exactly(size))
        reader.exactly(2)


class _Reader:
    """Buffered reads from a socket with explicit bounds."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buf = b""

    def _fill(self) -> None:
        data = self.conn.recv(CHUNK_BYTES)
        if not data:
            raise Refused(400, "connection closed mid-request")
        self.buf += data

    def until(
        self, marker: bytes, limit: int, too_long: Refused, empty_ok: bytes | None = None
    ) -> bytes:
        """Bytes before ``marker`` (consumed); ``empty_ok``: a marker that alone also ends it
        (an empty trailer section)."""
        while True:
            if empty_ok is not None and self.buf.startswith(empty_ok):
                self.buf = self.buf[len(empty_ok) :]
                return b""
            index = self.buf.find(marker)
            if index > limit:
                raise too_long
            if index >= 0:
                out, self.buf = self.buf[:index], self.buf[index + len(marker) :]
                return out
            if len(self.buf) > limit:
                raise too_long
            self._fill()

    def exactly(self, size: int) -> bytes:
        while len(self.buf) < size:
            self._fill()
        out, self.buf = self.buf[:size], self.buf[size:]
        return out
